package etip.sfx;

import java.io.File;
import java.io.InputStream;
import java.net.URL;
import java.security.MessageDigest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.inject.Named;
import javax.inject.Singleton;
import org.apache.maven.classrealm.ClassRealmConstituent;
import org.apache.maven.classrealm.ClassRealmManagerDelegate;
import org.apache.maven.classrealm.ClassRealmRequest;
import org.codehaus.plexus.classworlds.realm.ClassRealm;

/**
 * Loaded through -Dmaven.ext.class.path. When Maven creates the class realm of
 * maven-surefire-plugin / maven-failsafe-plugin 2.22.3 (Debian build), puts this
 * jar first on the realm's class path (delegates run before the plugin's own jars
 * are added) so its patched StreamFeeder (the copy of maven-shared-utils shaded
 * into maven-surefire-common) wins.
 */
@Named( "etip-surefire-stdin-fix" )
@Singleton
public class SurefireStdinFix
    implements ClassRealmManagerDelegate
{
    @Override
    public void setupRealm( ClassRealm realm, ClassRealmRequest request )
    {
        if ( Boolean.getBoolean( "etip.sfx.debug" ) )
        {
            System.err.println( "[etip-sfx] setupRealm " + realm.getId() + " " + request.getType() );
        }
        if ( request.getType() != ClassRealmRequest.RealmType.Plugin )
        {
            return;
        }
        boolean surefire = false;
        File common = null;
        for ( ClassRealmConstituent c : request.getConstituents() )
        {
            String ga = c.getGroupId() + ':' + c.getArtifactId();
            if ( ( "org.apache.maven.plugins:maven-surefire-plugin".equals( ga )
                || "org.apache.maven.plugins:maven-failsafe-plugin".equals( ga ) )
                && "2.22.3".equals( c.getVersion() ) )
            {
                surefire = true;
            }
            if ( "org.apache.maven.surefire:maven-surefire-common".equals( ga )
                && ( "debian".equals( c.getVersion() ) || "2.22.3".equals( c.getVersion() ) ) )
            {
                common = c.getFile();
            }
        }
        if ( surefire && common != null && isKnownFeeder( common ) )
        {
            URL self = SurefireStdinFix.class.getProtectionDomain().getCodeSource().getLocation();
            realm.addURL( self );
            if ( Boolean.getBoolean( "etip.sfx.debug" ) )
            {
                System.err.println( "[etip-sfx] patched StreamFeeder into " + realm.getId() );
            }
        }
    }

    /** SHA-256 of StreamFeeder.class in Debian bookworm's libsurefire-java 2.22.3-2 (the class this jar replaces). */
    private static final String KNOWN_FEEDER_SHA256 =
        "53496895bd18bb332809cba96f897619a388106d48cb0bc0a60035531df32e90";

    private static final String FEEDER_ENTRY =
        "org/apache/maven/surefire/shade/org/apache/maven/shared/utils/cli/StreamFeeder.class";

    private static boolean isKnownFeeder( File jar )
    {
        try ( ZipFile zip = new ZipFile( jar ) )
        {
            ZipEntry e = zip.getEntry( FEEDER_ENTRY );
            if ( e == null )
            {
                return false;
            }
            MessageDigest md = MessageDigest.getInstance( "SHA-256" );
            try ( InputStream in = zip.getInputStream( e ) )
            {
                byte[] buf = new byte[8192];
                for ( int n; ( n = in.read( buf ) ) > 0; )
                {
                    md.update( buf, 0, n );
                }
            }
            StringBuilder hex = new StringBuilder();
            for ( byte b : md.digest() )
            {
                hex.append( String.format( "%02x", b ) );
            }
            boolean known = KNOWN_FEEDER_SHA256.equals( hex.toString() );
            if ( !known && Boolean.getBoolean( "etip.sfx.debug" ) )
            {
                System.err.println( "[etip-sfx] unknown StreamFeeder " + hex + " in " + jar + ", not patching" );
            }
            return known;
        }
        catch ( Exception ex )
        {
            return false;
        }
    }
}
