// etip's Java workload runner: times one workload class in this (fresh) JVM and writes a report.
//
//     java -cp CLASSES:PROJECT_CLASS_PATH EtipWorkload --name NAME --repeat R --out REPORT.json CLASS
//
// CLASS has `public static void workload()` (and optionally `public static void setup()`), or a
// `public static void main(String[])`. R times, `setup()` runs untimed, then `workload()` (else
// `main(new String[0])`) is timed with System.nanoTime. etip's figure is the sum of the R timed
// calls; the mean of the last half of the calls is recorded beside it (the workload's own
// statistic, as for Python workloads). The JVM's start and class loading before the first call are
// not timed; the first calls include the JIT's warm-up, the same in both versions.
//
// A workload that throws is a failed detector: the report says so with the stack trace's head and
// the runner exits 1. A workload must not call System.exit (the report would be missing, which is a
// failure too). Java 8 and later; nothing outside the JDK.

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

public final class EtipWorkload {
    private EtipWorkload() {}

    static Method staticMethod(Class<?> c, String name, Class<?>... params) {
        try {
            Method m = c.getMethod(name, params);
            return Modifier.isStatic(m.getModifiers()) ? m : null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
            }
        }
        return b.append('"').toString();
    }

    static String trace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        String[] lines = w.toString().split("\n");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(lines.length, 12); i++) {
            b.append(lines[i]).append('\n');
        }
        return b.toString();
    }

    public static void main(String[] args) throws IOException {
        String name = "";
        String out = null;
        String cls = null;
        int repeat = 5;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--name": name = args[++i]; break;
                case "--repeat": repeat = Math.max(1, Integer.parseInt(args[++i])); break;
                case "--out": out = args[++i]; break;
                default: cls = args[i];
            }
        }
        List<Double> times = new ArrayList<>();
        String error = null;
        String shape = null;
        try {
            Class<?> c = Class.forName(cls);
            Method workload = staticMethod(c, "workload");
            Method setup = staticMethod(c, "setup");
            Method main = workload == null ? staticMethod(c, "main", String[].class) : null;
            if (workload == null && main == null) {
                throw new IllegalArgumentException(
                        cls + " has neither `public static void workload()` nor `public static void main(String[])`");
            }
            shape = workload != null ? "workload()" : "main(String[])";
            for (int k = 0; k < repeat; k++) {
                if (setup != null) {
                    setup.invoke(null);
                }
                long t0 = System.nanoTime();
                if (workload != null) {
                    workload.invoke(null);
                } else {
                    main.invoke(null, (Object) new String[0]);
                }
                times.add((System.nanoTime() - t0) / 1e9);
            }
        } catch (InvocationTargetException e) {
            error = trace(e.getCause() != null ? e.getCause() : e);
        } catch (Throwable e) {
            error = trace(e);
        }
        StringBuilder r = new StringBuilder("{\"runner\": \"etip_workload_java\", \"resolution\": 1e-9, \"detectors\": [{");
        r.append("\"name\": ").append(json(name)).append(", \"kind\": \"workload\", ");
        if (error == null) {
            double sum = 0;
            for (double t : times) {
                sum += t;
            }
            List<Double> half = times.size() > 1 ? times.subList(times.size() / 2, times.size()) : times;
            double own = 0;
            for (double t : half) {
                own += t;
            }
            own /= half.size();
            r.append("\"passed\": true, \"secs\": ").append(sum).append(", \"times\": ").append(times)
                    .append(", \"own\": {\"statistic\": \"mean of the last half of the calls\", \"secs\": ")
                    .append(own).append("}, \"shape\": ").append(json(shape));
        } else {
            r.append("\"passed\": false, \"secs\": null, \"error\": ").append(json(error));
        }
        r.append("}]}");
        Path target = Paths.get(out);
        Path tmp = Paths.get(out + ".tmp");
        Files.write(tmp, r.toString().getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.flush();
        Runtime.getRuntime().halt(error == null ? 0 : 1);
    }
}
