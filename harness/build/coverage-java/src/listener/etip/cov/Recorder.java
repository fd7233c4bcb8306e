package etip.cov;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One JaCoCo session per top-level test class, shared by the JUnit 4 and JUnit Platform listeners.
 *
 * <p>The agent's probes are global to the JVM, so a session is a <em>window</em>: it opens when a
 * test class starts while no other class is running and closes (dump with reset, appended to the
 * agent's destfile) when no class is running any more. Its session id names the top-level classes
 * that ran in it, separated by single spaces: one name when classes run one after the other (the
 * normal case), several when they overlapped (parallel execution: each of them gets the union).
 *
 * <p>There is no reset when a class starts: what ran since the previous dump (JVM start, the
 * runner of the class being built, a JUnit 4 {@code Parameterized} class computing its parameters)
 * counts for the class that starts next. Session ids longer than {@link #MAX_ID} bytes are split:
 * the first part carries the data, each further part is an empty session whose id starts with
 * {@code "+ "} and that shares the data of the session before it. After each dump the session id
 * is {@value #REST}: the agent's own dump at JVM exit (option {@code dumponexit=true}) holds what
 * ran after the last class, or everything when no listener event came (TestNG, JUnit 3 provider).
 *
 * <p>Without a running JaCoCo agent ({@code org.jacoco.agent.rt.RT} absent or not started),
 * prints one warning line on stderr and does nothing.
 */
public final class Recorder {
    /** The shared instance (both listeners may live in one JVM). */
    public static final Recorder INSTANCE = new Recorder();

    /** JaCoCo writes the session id with {@code DataOutput.writeUTF}: at most 65535 bytes. */
    static final int MAX_ID = 60000;

    /** Session id of data recorded outside every class window (also the agent's {@code sessionid} option). */
    public static final String REST = "etip.cov:rest";

    /**
     * Session id of what ran while the JUnit Platform discovered the tests, before the first class
     * started (Vintage builds every JUnit 4 runner then: {@code Parameterized} parameters, JUnit 3
     * constructors), which cannot be attributed to one class.
     */
    public static final String DISCOVERY = "etip.cov:discovery";

    private static final class Entry {
        final Object key;
        final String top;

        Entry(Object key, String top) {
            this.key = key;
            this.top = top;
        }
    }

    private final List<Entry> active = new ArrayList<Entry>();
    private final Set<String> window = new LinkedHashSet<String>();
    /** JUnit 4 tests that ran outside any class suite (JUnit 3 classes, JUnit before 4.13). */
    private String pendingTop;

    private boolean resolved;
    private Object agent;
    private Method setSessionId;
    private Method dump;

    private Recorder() {}

    /** The keys of the running top-level classes (for the listeners' containment checks). */
    public synchronized List<Object> activeKeys() {
        List<Object> keys = new ArrayList<Object>(active.size());
        for (Entry e : active) {
            keys.add(e.key);
        }
        return keys;
    }

    /** A top-level test class starts (its outermost container, identified by {@code key}). */
    public synchronized void classStarted(Object key, String top) {
        if (active.isEmpty() && pendingTop != null) {
            String p = pendingTop;
            pendingTop = null;
            dumpAs(p);
        }
        active.add(new Entry(key, top));
        window.add(top);
    }

    /** The container {@code key} finished; ignored unless it opened a class window. */
    public synchronized void classFinished(Object key) {
        for (Iterator<Entry> it = active.iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (e.key.equals(key)) {
                it.remove();
                if (active.isEmpty()) {
                    closeWindow();
                }
                return;
            }
        }
    }

    /**
     * A test started outside every class window (a runner that reports no class suite): the data
     * since the last dump belongs to the previous such class when the class changes.
     */
    public synchronized void testOutsideClass(String top) {
        if (top == null) {
            return;
        }
        if (!active.isEmpty()) {
            // runs in parallel with a class window (the listeners skip tests inside one): shares its session
            window.add(top);
            return;
        }
        if (pendingTop != null && !pendingTop.equals(top)) {
            dumpAs(pendingTop);
        }
        pendingTop = top;
    }

    /**
     * Dumps what ran since the last dump as the pseudo session {@code id} (for example
     * {@value #DISCOVERY}), unless a class is running.
     */
    public synchronized void checkpoint(String id) {
        if (!active.isEmpty()) {
            return;
        }
        if (pendingTop != null) {
            String p = pendingTop;
            pendingTop = null;
            dumpAs(p);
        }
        dumpAs(id);
    }

    /** The run ended: dump whatever is still open. */
    public synchronized void runFinished() {
        if (!active.isEmpty()) {
            active.clear();
            closeWindow();
        }
        if (pendingTop != null) {
            String p = pendingTop;
            pendingTop = null;
            dumpAs(p);
        }
    }

    private void closeWindow() {
        StringBuilder id = new StringBuilder();
        for (String t : window) {
            if (id.length() > 0) {
                id.append(' ');
            }
            id.append(t);
        }
        window.clear();
        dumpAs(id.toString());
    }

    private void dumpAs(String id) {
        if (!resolve()) {
            return;
        }
        List<String> parts = split(id);
        for (int i = 0; i < parts.size(); i++) {
            String part = i == 0 ? parts.get(i) : "+ " + parts.get(i);
            try {
                setSessionId.invoke(agent, part);
                dump.invoke(agent, Boolean.TRUE);
            } catch (InvocationTargetException e) {
                System.err.println("[etip-cov] WARNING: JaCoCo dump failed for " + part + ": " + e.getCause());
            } catch (Exception e) {
                System.err.println("[etip-cov] WARNING: JaCoCo dump failed for " + part + ": " + e);
            }
        }
        try {
            // What runs outside every class window (and the agent's dump at exit) is "etip.cov:rest".
            setSessionId.invoke(agent, REST);
        } catch (Exception e) {
            // ignored: the next dump sets its own id
        }
    }

    /** Splits a space-separated id into parts of at most {@link #MAX_ID} UTF-8 bytes. */
    static List<String> split(String id) {
        List<String> parts = new ArrayList<String>();
        StringBuilder cur = new StringBuilder();
        int bytes = 0;
        for (String name : id.split(" ")) {
            int n = name.getBytes(StandardCharsets.UTF_8).length + 1;
            if (cur.length() > 0 && bytes + n > MAX_ID) {
                parts.add(cur.toString());
                cur.setLength(0);
                bytes = 0;
            }
            if (cur.length() > 0) {
                cur.append(' ');
            }
            cur.append(name);
            bytes += n;
        }
        parts.add(cur.toString());
        return parts;
    }

    private boolean resolve() {
        if (resolved) {
            return agent != null;
        }
        resolved = true;
        try {
            Class<?> rt = Class.forName("org.jacoco.agent.rt.RT", true, ClassLoader.getSystemClassLoader());
            Class<?> iagent = Class.forName("org.jacoco.agent.rt.IAgent", true, rt.getClassLoader());
            Object a = rt.getMethod("getAgent").invoke(null);
            setSessionId = iagent.getMethod("setSessionId", String.class);
            dump = iagent.getMethod("dump", boolean.class);
            agent = a;
            return true;
        } catch (InvocationTargetException e) {
            System.err.println("[etip-cov] WARNING: no JaCoCo agent in this JVM (" + e.getCause()
                + "); per-test-class coverage is not recorded");
        } catch (Throwable e) {
            System.err.println("[etip-cov] WARNING: no JaCoCo agent in this JVM (" + e
                + "); per-test-class coverage is not recorded");
        }
        return false;
    }

    /** The top-level class enclosing {@code c} (itself when it is top-level). */
    public static String topLevel(Class<?> c) {
        try {
            Class<?> t = c;
            for (Class<?> e = t.getEnclosingClass(); e != null; e = t.getEnclosingClass()) {
                t = e;
            }
            return t.getName();
        } catch (Throwable e) {
            return topLevel(c.getName());
        }
    }

    /** The top-level class of a binary class name: everything before the first {@code $}. */
    public static String topLevel(String className) {
        if (className == null) {
            return null;
        }
        int dollar = className.indexOf('$');
        return dollar > 0 ? className.substring(0, dollar) : className;
    }
}
