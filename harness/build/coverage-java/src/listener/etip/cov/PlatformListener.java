package etip.cov;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * JUnit Platform listener, registered through {@code META-INF/services}: one JaCoCo session per
 * top-level test class, see {@link Recorder}. A class window is the outermost started node whose
 * source is a class (Jupiter and Vintage class containers; {@code @Nested} classes and the
 * classes of a suite belong to the outermost one) or, without such an ancestor, a method. What
 * ran during test discovery is the session {@value Recorder#DISCOVERY}.
 */
public class PlatformListener implements TestExecutionListener {
    private final Recorder rec = Recorder.INSTANCE;
    /** Started and not yet finished nodes: unique id to parent id (null for roots). */
    private final Map<String, String> running = new HashMap<String, String>();

    @Override
    public void executionStarted(TestIdentifier id) {
        String top = null;
        synchronized (running) {
            running.put(id.getUniqueId(), id.getParentId().orElse(null));
            for (String p = id.getParentId().orElse(null); p != null; p = running.get(p)) {
                if (rec.activeKeys().contains(p)) {
                    return;
                }
            }
        }
        Optional<TestSource> source = id.getSource();
        if (source.isPresent()) {
            TestSource s = source.get();
            if (s instanceof ClassSource) {
                top = topOf((ClassSource) s);
            } else if (s instanceof MethodSource) {
                top = Recorder.topLevel(((MethodSource) s).getClassName());
            }
        }
        if (top != null) {
            rec.classStarted(id.getUniqueId(), top);
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        synchronized (running) {
            running.remove(id.getUniqueId());
        }
        rec.classFinished(id.getUniqueId());
    }

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        rec.checkpoint(Recorder.DISCOVERY);
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        rec.runFinished();
    }

    private static String topOf(ClassSource s) {
        try {
            return Recorder.topLevel(s.getJavaClass());
        } catch (Throwable e) {
            return Recorder.topLevel(s.getClassName());
        }
    }
}
