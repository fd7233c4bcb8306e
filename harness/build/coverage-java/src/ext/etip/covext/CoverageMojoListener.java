package etip.covext;

import java.io.File;
import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.Properties;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import javax.inject.Named;
import javax.inject.Singleton;
import org.apache.maven.artifact.Artifact;
import org.apache.maven.execution.MavenSession;
import org.apache.maven.execution.MojoExecutionEvent;
import org.apache.maven.execution.MojoExecutionListener;
import org.apache.maven.plugin.MojoExecution;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.project.MavenProject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loaded through {@code -Dmaven.ext.class.path}. Only when the user or system property
 * {@code etip.coverage.dir} is set: just before each {@code maven-surefire-plugin:test} execution
 * runs (after Maven has configured it from the POM, the executions, pluginManagement and the
 * command line), changes the configured mojo so that the forked test JVM runs JaCoCo's agent
 * and etip's per-test-class listener:
 *
 * <ul>
 *   <li>{@code argLine}: the project's effective value (configuration or {@code argLine}
 *       property), then {@code -javaagent:<dir of this jar>/jacocoagent.jar=destfile=<etip.coverage.dir>/<artifactId>.exec,...};
 *   <li>{@code additionalClasspathElements}: plus {@code etip-cov-listener.jar} (next to this jar);
 *   <li>{@code properties}: {@code listener} plus {@code etip.cov.JUnit4Listener} (Surefire's
 *       JUnit 4 providers; the JUnit Platform finds its listener through ServiceLoader; not with
 *       TestNG, whose provider would take it for a TestNG listener);
 *   <li>{@code forkCount=0} / {@code forkMode=never} become 1 / once (tests in Maven's own JVM
 *       would run without the agent), with a warning.
 * </ul>
 *
 * When {@code etip-cov-unseal.jar} is next to this jar, {@code -javaagent:} it comes first (JaCoCo
 * 0.8.6 cannot instrument sealed classes; see {@code etip.cov.unseal.Unseal}).
 *
 * Optional: {@code etip.coverage.includes} (JaCoCo {@code includes} pattern, e.g. {@code demo.*}),
 * {@code etip.coverage.agent} (another agent jar), {@code etip.coverage.unseal=false},
 * {@code etip.coverage.debug=true}.
 * Without {@code etip.coverage.dir} nothing is changed.
 */
@Named("etip-coverage")
@Singleton
public class CoverageMojoListener implements MojoExecutionListener {
    private static final Logger LOG = LoggerFactory.getLogger("etip-cov");

    /** Main class of Debian's unrelocated {@code org.jacoco.agent.rt.jar}. */
    private static final String UNRELOCATED_PREMAIN = "org.jacoco.agent.rt.internal.PreMain";

    @Override
    public void beforeMojoExecution(MojoExecutionEvent event) throws MojoExecutionException {
        MavenSession session = event.getSession();
        String dir = property(session, "etip.coverage.dir");
        if (dir == null || dir.trim().isEmpty()) {
            return;
        }
        MojoExecution ex = event.getExecution();
        if (!"org.apache.maven.plugins".equals(ex.getGroupId())
            || !"maven-surefire-plugin".equals(ex.getArtifactId()) || !"test".equals(ex.getGoal())) {
            return;
        }
        MavenProject project = event.getProject();
        Object mojo = event.getMojo();
        boolean debug = Boolean.parseBoolean(property(session, "etip.coverage.debug"));

        File base = new File(session.getExecutionRootDirectory() != null ? session.getExecutionRootDirectory() : ".");
        File out = new File(dir.trim());
        if (!out.isAbsolute()) {
            out = new File(base, dir.trim());
        }
        out = out.getAbsoluteFile();
        File home = home();
        String agentProp = property(session, "etip.coverage.agent");
        File agent = agentProp != null && !agentProp.trim().isEmpty() ? new File(agentProp.trim()) : new File(home, "jacocoagent.jar");
        File listenerJar = new File(home, "etip-cov-listener.jar");
        if (!agent.isFile() || !listenerJar.isFile()) {
            throw new MojoExecutionException("etip-cov: coverage impossible: " + (!agent.isFile() ? agent : listenerJar)
                + " is missing (etip.coverage.dir is set)");
        }
        String path = out.getPath();
        if (path.indexOf(',') >= 0 || path.indexOf('=') >= 0 || path.indexOf('"') >= 0) {
            throw new MojoExecutionException("etip-cov: coverage impossible: etip.coverage.dir must not contain ',', '=' or '\"': " + path);
        }
        if (!out.isDirectory() && !out.mkdirs()) {
            throw new MojoExecutionException("etip-cov: cannot create " + out);
        }
        File exec = new File(out, execName(session, project));
        if (exec.exists()) {
            LOG.warn("etip-cov: " + exec + " exists; its sessions are appended to");
        }

        try {
            // forkCount=0 runs the tests in Maven's JVM, without the agent.
            String forkCount = (String) get(mojo, "forkCount");
            String forkMode = (String) get(mojo, "forkMode");
            if (isZero(forkCount) || "never".equals(forkMode)) {
                LOG.warn("etip-cov: " + project.getArtifactId() + " runs its tests in Maven's JVM (forkCount=" + forkCount
                    + ", forkMode=" + forkMode + "); forcing forkCount=1 so that the JaCoCo agent runs");
                set(mojo, "forkCount", "1");
                if ("never".equals(forkMode)) {
                    set(mojo, "forkMode", "once");
                }
            }

            boolean testng = false;
            if (project.getArtifacts() != null) {
                for (Artifact a : project.getArtifacts()) {
                    if ("org.testng".equals(a.getGroupId()) && "testng".equals(a.getArtifactId())) {
                        testng = true;
                    }
                }
            }

            // etip's listener, and JDK tools loaded by the application class loader (javac...)
            String excludes = "etip.cov.*:com.sun.tools.*:com.sun.source.*:com.sun.jdi.*:jdk.*";
            if (UNRELOCATED_PREMAIN.equals(premain(agent))) {
                // Debian's agent classes, JaCoCo core and ASM are not relocated: the agent must not instrument them.
                excludes = "org.jacoco.*:org.objectweb.*:" + excludes;
            }
            StringBuilder opts = new StringBuilder();
            opts.append("destfile=").append(exec.getPath())
                .append(",append=true,dumponexit=true,sessionid=etip.cov:rest,excludes=").append(excludes);
            String includes = property(session, "etip.coverage.includes");
            if (includes != null && !includes.trim().isEmpty()) {
                opts.append(",includes=").append(includes.trim());
            }
            String javaagent = "-javaagent:" + agent.getAbsolutePath() + "=" + opts;
            if (javaagent.indexOf(' ') >= 0 || javaagent.indexOf('\t') >= 0) {
                javaagent = "\"" + javaagent + "\"";
            }
            File unseal = new File(home, "etip-cov-unseal.jar");
            if (unseal.isFile() && !"false".equals(property(session, "etip.coverage.unseal"))) {
                // before JaCoCo's agent: its transformer then gets the unsealed class files
                String u = "-javaagent:" + unseal.getAbsolutePath();
                javaagent = (u.indexOf(' ') >= 0 ? "\"" + u + "\"" : u) + " " + javaagent;
            }
            String argLine = (String) get(mojo, "argLine");
            String newArgLine = argLine == null || argLine.trim().isEmpty() ? javaagent : argLine + " " + javaagent;
            set(mojo, "argLine", newArgLine);

            String[] extra = (String[]) get(mojo, "additionalClasspathElements");
            String[] cp = extra == null ? new String[1] : Arrays.copyOf(extra, extra.length + 1);
            cp[cp.length - 1] = listenerJar.getAbsolutePath();
            set(mojo, "additionalClasspathElements", cp);

            if (!testng) {
                Properties old = (Properties) get(mojo, "properties");
                Properties props = new Properties();
                if (old != null) {
                    props.putAll(old);
                }
                String listener = props.getProperty("listener");
                props.setProperty("listener", listener == null || listener.trim().isEmpty()
                    ? "etip.cov.JUnit4Listener" : listener + ",etip.cov.JUnit4Listener");
                set(mojo, "properties", props);
            } else {
                LOG.warn("etip-cov: " + project.getArtifactId() + " uses TestNG: no per-test-class sessions, "
                    + "the whole run is recorded as session etip.cov:rest");
            }
            Object tcd = get(mojo, "testClassesDirectory");
            if (tcd instanceof File && !((File) tcd).isDirectory()) {
                LOG.debug("etip-cov: " + project.getArtifactId() + ": no test classes; configured anyway");
            } else {
                LOG.info("etip-cov: " + project.getArtifactId() + ": JaCoCo agent on, per-test-class sessions -> " + exec);
            }
            if (debug) {
                LOG.info("etip-cov: argLine = " + newArgLine);
                LOG.info("etip-cov: additionalClasspathElements = " + Arrays.toString(cp));
                LOG.info("etip-cov: properties = " + get(mojo, "properties"));
            }
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new MojoExecutionException("etip-cov: coverage impossible: cannot configure "
                + mojo.getClass().getName() + " (" + e + ")", e);
        }
    }

    @Override
    public void afterMojoExecutionSuccess(MojoExecutionEvent event) {}

    @Override
    public void afterExecutionFailure(MojoExecutionEvent event) {}

    private static String property(MavenSession session, String name) {
        String v = session.getUserProperties() != null ? session.getUserProperties().getProperty(name) : null;
        if (v == null && session.getSystemProperties() != null) {
            v = session.getSystemProperties().getProperty(name);
        }
        return v != null ? v : System.getProperty(name);
    }

    /** {@code <artifactId>.exec}, or {@code <groupId>.<artifactId>.exec} when another project of the reactor has the same artifactId. */
    private static String execName(MavenSession session, MavenProject project) {
        if (session.getProjects() != null) {
            for (MavenProject p : session.getProjects()) {
                if (p != project && project.getArtifactId().equals(p.getArtifactId())
                    && !project.getGroupId().equals(p.getGroupId())) {
                    return project.getGroupId() + "." + project.getArtifactId() + ".exec";
                }
            }
        }
        return project.getArtifactId() + ".exec";
    }

    private static boolean isZero(String forkCount) {
        if (forkCount == null) {
            return false;
        }
        String s = forkCount.trim();
        if (s.endsWith("C") || s.endsWith("c")) {
            s = s.substring(0, s.length() - 1);
        }
        try {
            return Double.parseDouble(s) == 0.0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static File home() {
        try {
            File self = new File(CoverageMojoListener.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return self.getParentFile();
        } catch (Exception e) {
            return new File("/opt/etip/cov");
        }
    }

    private static String premain(File agent) {
        try (JarFile jar = new JarFile(agent)) {
            Manifest m = jar.getManifest();
            return m == null ? null : m.getMainAttributes().getValue("Premain-Class");
        } catch (Exception e) {
            return null;
        }
    }

    private static Field field(Object o, String name) throws NoSuchFieldException {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // next
            }
        }
        throw new NoSuchFieldException(o.getClass().getName() + "." + name);
    }

    private static Object get(Object o, String name) throws ReflectiveOperationException {
        return field(o, name).get(o);
    }

    private static void set(Object o, String name, Object value) throws ReflectiveOperationException {
        field(o, name).set(o, value);
    }
}
