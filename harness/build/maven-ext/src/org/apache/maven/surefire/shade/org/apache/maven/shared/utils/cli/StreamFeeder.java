/*
 * Licensed to the Apache Software Foundation (ASF) under one
 * or more contributor license agreements.  See the NOTICE file
 * distributed with this work for additional information
 * regarding copyright ownership.  The ASF licenses this file
 * to you under the Apache License, Version 2.0 (the
 * "License"); you may not use this file except in compliance
 * with the License.  You may obtain a copy of the License at
 *
 *   http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing,
 * software distributed under the License is distributed on an
 * "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
 * KIND, either express or implied.  See the License for the
 * specific language governing permissions and limitations
 * under the License.
 *
 * Derived from org.apache.maven.shared.utils.cli.StreamFeeder of Apache Maven Shared Utils 3.3.4
 * (as shaded into Debian bookworm's libsurefire-java 2.22.3-2); changed by etip: waitUntilDone().
 */
package org.apache.maven.surefire.shade.org.apache.maven.shared.utils.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicReference;

/**
 * etip: drop-in replacement for the copy of maven-shared-utils 3.3.4 StreamFeeder shaded into Debian's maven-surefire-common 2.22.3, identical
 * (bugs included) except waitUntilDone(). CommandLineUtils$2.call() only calls
 * waitUntilDone() after Process.waitFor() returned, but runs the
 * runAfterProcessTermination hook (Surefire's CloseableCloser, which closes the
 * TestLessInputStream the feeder blocks on) only afterwards, so the feeder stays
 * blocked until Surefire's 10 s ping. Closing the input here restores the order
 * of maven-shared-utils 3.1.0 (which Surefire 2.22.x shades upstream).
 */
class StreamFeeder
    extends AbstractStreamHandler
{
    private final AtomicReference<InputStream> input;

    private final AtomicReference<OutputStream> output;

    private volatile Throwable exception;

    StreamFeeder( InputStream input, OutputStream output )
    {
        this.input = new AtomicReference<InputStream>( input );
        this.output = new AtomicReference<OutputStream>( output );
    }

    @Override
    public void run()
    {
        try
        {
            feed();
        }
        catch ( Throwable e )
        {
            // sic: 3.3.4 never records the exception (condition inverted); kept for identical behaviour
            if ( exception != null )
            {
                exception = e;
            }
        }
        finally
        {
            close();
            synchronized ( this )
            {
                notifyAll();
            }
        }
    }

    @Override
    public void waitUntilDone()
        throws InterruptedException
    {
        // The process has terminated: nothing can read its stdin any more.
        InputStream is = input.get();
        if ( is != null )
        {
            try
            {
                is.close();
            }
            catch ( IOException ignored )
            {
                // same as close() below
            }
        }
        super.waitUntilDone();
    }

    public void close()
    {
        setDone();
        final InputStream is = input.getAndSet( null );
        if ( is != null )
        {
            try
            {
                is.close();
            }
            catch ( IOException ex )
            {
                if ( exception != null )
                {
                    exception = ex;
                }
            }
        }

        final OutputStream os = output.getAndSet( null );
        if ( os != null )
        {
            try
            {
                os.close();
            }
            catch ( IOException ex )
            {
                if ( exception != null )
                {
                    exception = ex;
                }
            }
        }
    }

    public Throwable getException()
    {
        return exception;
    }

    @SuppressWarnings( "checkstyle:innerassignment" )
    private void feed()
        throws IOException
    {
        InputStream is = input.get();
        OutputStream os = output.get();
        boolean flush = false;
        if ( is != null && os != null )
        {
            for ( int data; !isDone() && ( data = is.read() ) != -1; )
            {
                if ( !isDisabled() )
                {
                    os.write( data );
                    flush = true;
                }
            }

            if ( flush )
            {
                os.flush();
            }
        }
    }
}
