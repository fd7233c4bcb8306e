package etip.cov;

import org.junit.runner.Description;
import org.junit.runner.Result;
import org.junit.runner.notification.RunListener;

/**
 * JUnit 4 {@link RunListener} (Surefire: {@code <properties><property><name>listener</name>
 * <value>etip.cov.JUnit4Listener</value></property></properties>}, JUnitCore:
 * {@code addListener}): one JaCoCo session per top-level test class, see {@link Recorder}.
 *
 * <p>A class window is the outermost suite whose description names a loadable class (JUnit 4.13
 * reports suites; a {@code Suite} class keeps its member classes, {@code Enclosed} its nested
 * classes, {@code Parameterized} its parameter sets). Tests that run without a class suite
 * (JUnit 3 classes, JUnit older than 4.13) are attributed from their own class name, the session
 * closing when the class changes.
 */
public class JUnit4Listener extends RunListener {
    private final Recorder rec = Recorder.INSTANCE;

    @Override
    public void testSuiteStarted(Description d) {
        Class<?> c = d.getTestClass();
        if (c == null || insideRunningClass(d)) {
            return;
        }
        rec.classStarted(d, Recorder.topLevel(c));
    }

    @Override
    public void testSuiteFinished(Description d) {
        rec.classFinished(d);
    }

    @Override
    public void testStarted(Description d) {
        if (insideRunningClass(d)) {
            return;
        }
        Class<?> c = d.getTestClass();
        rec.testOutsideClass(c != null ? Recorder.topLevel(c) : Recorder.topLevel(d.getClassName()));
    }

    @Override
    public void testRunFinished(Result result) {
        rec.runFinished();
    }

    private boolean insideRunningClass(Description d) {
        for (Object k : rec.activeKeys()) {
            if (k instanceof Description && contains((Description) k, d)) {
                return true;
            }
        }
        return false;
    }

    private static boolean contains(Description root, Description d) {
        for (Description child : root.getChildren()) {
            if (child.equals(d) || contains(child, d)) {
                return true;
            }
        }
        return false;
    }
}
