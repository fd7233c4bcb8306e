import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.analysis.IMethodCoverage;
import org.jacoco.core.data.ExecutionData;
import org.jacoco.core.data.ExecutionDataReader;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.internal.data.CRC64;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.Opcodes;

/**
 * etip's per-test-class coverage report: which test classes executed code of the changed source
 * files, from the JaCoCo exec files written by etip's listener (one session per test class).
 *
 * <pre>
 * java -cp /usr/share/java/org.jacoco.core.jar:/usr/share/java/asm.jar:/usr/share/java/asm-commons.jar:/usr/share/java/asm-tree.jar \
 *   /opt/etip/cov/EtipCovReport.java --exec target.exec [--exec DIR]... --classes target/classes [--classes X]... \
 *   --changed src/main/java/demo/Text.java [--changed P]... [--changed-list FILE|-]
 * </pre>
 *
 * Writes JSON lines on stdout, sorted by test class: per test class one
 * {@code {"test":T,"classes_hit":N,"exclusive":B}} (N = classes of the changed files with at least
 * one executed instruction; {@code exclusive} false when the class ran in a session shared with
 * other classes, i.e. in parallel; {@code "mismatched":M} added when M classes of the changed files
 * have execution data that does not match the given class files, i.e. they were recompiled after
 * the run and their coverage is not counted), then one
 * line per such class: {@code {"test":T,"class":"demo/Text","source":"demo/Text.java",
 * "file":"src/main/java/demo/Text.java","methods":[{"name","desc","first","last","covered"}],
 * "lines":[...]}}. The pseudo sessions {@code etip.cov:rest} (recorded outside every test class:
 * after the last one, or the whole run when no listener event came) and {@code etip.cov:discovery}
 * (JUnit Platform test discovery) are listed, with {@code "pseudo":true}, only when they hit a
 * changed class. Exit 2 on bad arguments or a missing or unreadable
 * exec file or classes location; warnings go to stderr.
 */
public class EtipCovReport {
    /** Prefix of the sessions that are no test class: etip.cov:rest, etip.cov:discovery. */
    static final String PSEUDO = "etip.cov:";

    static PrintStream out;

    public static void main(String[] args) throws Exception {
        out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        List<File> execs = new ArrayList<>();
        List<File> classes = new ArrayList<>();
        List<String> changed = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                usage(null);
            }
            if (i + 1 >= args.length) {
                usage("missing value after " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--exec": execs.add(new File(v)); break;
                case "--classes": classes.add(new File(v)); break;
                case "--changed": changed.add(norm(v)); break;
                case "--changed-list": changed.addAll(readList(v)); break;
                default: usage("unknown argument " + a);
            }
        }
        if (execs.isEmpty() || classes.isEmpty()) {
            usage("need at least one --exec and one --classes");
        }

        List<File> execFiles = expandExecs(execs);

        // 1. Class files compiled from the changed sources.
        Map<String, Candidate> candidates = new TreeMap<>();
        for (File c : classes) {
            if (!c.exists()) {
                fail("classes location " + c + " does not exist");
            }
            scan(c, changed, candidates);
        }
        if (candidates.isEmpty()) {
            System.err.println("etip-cov-report: no class in " + classes + " was compiled from " + changed);
        }

        // 2. Sessions: test class -> merged execution data of those classes, in first-seen order.
        Map<String, ExecutionDataStore> perTest = new LinkedHashMap<>();
        Set<String> shared = new LinkedHashSet<>();
        for (File f : execFiles) {
            readExec(f, candidates.keySet(), perTest, shared);
        }

        // 3. One analysis per test class, of the candidate classes only.
        Set<String> warned = new LinkedHashSet<>();
        Map<String, ExecutionDataStore> sortedTests = new TreeMap<>(perTest);
        for (Map.Entry<String, ExecutionDataStore> t : sortedTests.entrySet()) {
            String test = t.getKey();
            ExecutionDataStore store = t.getValue();
            CoverageBuilder builder = new CoverageBuilder();
            Analyzer analyzer = new Analyzer(store, builder);
            for (Candidate cand : candidates.values()) {
                if (store.contains(cand.name)) {
                    if (cand.stripped && store.get(cand.id) == null && store.get(cand.originalId) != null) {
                        // recorded without etip's unsealing agent (a JaCoCo that reads sealed classes)
                        ExecutionData d = store.get(cand.originalId);
                        store.put(new ExecutionData(cand.id, d.getName(), d.getProbes().clone()));
                    }
                    try {
                        analyzer.analyzeClass(cand.bytes, cand.location);
                    } catch (IOException | RuntimeException e) {
                        if (warned.add(cand.name)) {
                            System.err.println("etip-cov-report: cannot analyze " + cand.location + ": " + e
                                + (e.getCause() != null ? " (" + e.getCause() + ")" : ""));
                        }
                    }
                }
            }
            List<String> lines = new ArrayList<>();
            Map<String, IClassCoverage> sorted = new TreeMap<>();
            for (IClassCoverage cc : builder.getClasses()) {
                sorted.put(cc.getName(), cc);
            }
            int mismatched = 0;
            for (IClassCoverage cc : sorted.values()) {
                if (cc.isNoMatch()) {
                    mismatched++;
                    if (warned.add("nomatch " + cc.getName())) {
                        System.err.println("etip-cov-report: execution data of " + cc.getName()
                            + " does not match its class file (recompiled after the run?); not counted");
                    }
                    continue;
                }
                if (cc.getInstructionCounter().getCoveredCount() == 0) {
                    continue;
                }
                lines.add(classLine(test, cc, candidates.get(cc.getName())));
            }
            boolean pseudo = test.startsWith(PSEUDO);
            if (pseudo && lines.isEmpty()) {
                continue;
            }
            out.println("{\"test\":" + q(test) + ",\"classes_hit\":" + lines.size()
                + ",\"exclusive\":" + !shared.contains(test) + (pseudo ? ",\"pseudo\":true" : "")
                + (mismatched > 0 ? ",\"mismatched\":" + mismatched : "") + "}");
            for (String l : lines) {
                out.println(l);
            }
        }
        out.flush();
    }

    static final class Candidate {
        final String name;
        final String source;
        final String file;
        /** The class file as etip's agents hand it to JaCoCo (without PermittedSubclasses). */
        final byte[] bytes;
        final String location;
        final boolean stripped;
        final long id;
        final long originalId;

        Candidate(String name, String source, String file, byte[] original, String location) {
            this.name = name;
            this.source = source;
            this.file = file;
            this.location = location;
            byte[] s = stripPermittedSubclasses(original);
            this.stripped = s != null;
            this.bytes = s != null ? s : original;
            this.id = CRC64.classId(this.bytes);
            this.originalId = CRC64.classId(original);
        }
    }

    static String classLine(String test, IClassCoverage cc, Candidate cand) {
        StringBuilder b = new StringBuilder();
        b.append("{\"test\":").append(q(test));
        b.append(",\"class\":").append(q(cc.getName()));
        b.append(",\"source\":").append(q(cand != null ? cand.source : cc.getPackageName() + "/" + cc.getSourceFileName()));
        if (cand != null) {
            b.append(",\"file\":").append(q(cand.file));
        }
        b.append(",\"methods\":[");
        boolean first = true;
        for (IMethodCoverage m : cc.getMethods()) {
            if (!first) {
                b.append(',');
            }
            first = false;
            b.append("{\"name\":").append(q(m.getName()));
            b.append(",\"desc\":").append(q(m.getDesc()));
            b.append(",\"first\":").append(m.getFirstLine());
            b.append(",\"last\":").append(m.getLastLine());
            b.append(",\"covered\":").append(m.getInstructionCounter().getCoveredCount() > 0);
            b.append('}');
        }
        b.append("],\"lines\":[");
        first = true;
        if (cc.getFirstLine() >= 0) {
            for (int n = cc.getFirstLine(); n <= cc.getLastLine(); n++) {
                ICounter ins = cc.getLine(n).getInstructionCounter();
                if (ins.getCoveredCount() > 0) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    b.append(n);
                }
            }
        }
        b.append("]}");
        return b.toString();
    }

    // ---- exec files -------------------------------------------------------------------------

    static List<File> expandExecs(List<File> execs) {
        List<File> files = new ArrayList<>();
        for (File f : execs) {
            if (f.isDirectory()) {
                File[] list = f.listFiles((d, n) -> n.endsWith(".exec"));
                if (list == null || list.length == 0) {
                    fail("no .exec file in " + f);
                }
                java.util.Arrays.sort(list);
                files.addAll(java.util.Arrays.asList(list));
            } else if (!f.isFile()) {
                fail("exec file " + f + " does not exist");
            } else if (!f.canRead()) {
                fail("exec file " + f + " is not readable");
            } else {
                files.add(f);
            }
        }
        return files;
    }

    /** One session of an exec file: the test classes it names and the data that followed it. */
    static final class Session {
        final List<String> tests = new ArrayList<>();
        final ExecutionDataStore data = new ExecutionDataStore();
    }

    /**
     * Reads one exec file keeping sessions apart: the data after a session info belongs to it.
     * Keeps the data of the classes named in {@code keep} only.
     */
    static void readExec(File f, Set<String> keep, Map<String, ExecutionDataStore> perTest, Set<String> shared) {
        final List<Session> sessions = new ArrayList<>();
        try (InputStream in = new BufferedInputStream(new FileInputStream(f))) {
            ExecutionDataReader reader = new ExecutionDataReader(in);
            reader.setSessionInfoVisitor(info -> {
                String id = info.getId();
                if (id.startsWith("+ ") && !sessions.isEmpty()) {
                    // continuation of a split session id: more names for the data of the session before
                    Session prev = sessions.get(sessions.size() - 1);
                    names(id.substring(2), prev.tests);
                    sessions.add(new Session()); // empty, takes any (unexpected) data
                } else {
                    Session s = new Session();
                    names(id, s.tests);
                    if (s.tests.isEmpty()) {
                        s.tests.add("");
                    }
                    sessions.add(s);
                }
            });
            reader.setExecutionDataVisitor(data -> {
                if (sessions.isEmpty()) {
                    Session s = new Session();
                    s.tests.add("<no session>");
                    sessions.add(s);
                }
                if (keep.contains(data.getName())) {
                    sessions.get(sessions.size() - 1).data.put(copy(data));
                }
            });
            reader.read();
        } catch (IOException | RuntimeException e) {
            fail("exec file " + f + " is unreadable: " + e);
        }
        if (sessions.isEmpty()) {
            System.err.println("etip-cov-report: " + f + " holds no session (no test class ran with the agent?)");
        }
        for (Session s : sessions) {
            if (s.tests.size() > 1) {
                shared.addAll(s.tests);
            }
            for (String t : s.tests) {
                ExecutionDataStore dst = perTest.computeIfAbsent(t, k -> new ExecutionDataStore());
                for (ExecutionData d : s.data.getContents()) {
                    dst.put(copy(d));
                }
            }
        }
    }

    static void names(String id, List<String> into) {
        for (String t : id.split(" ")) {
            if (!t.isEmpty() && !into.contains(t)) {
                into.add(t);
            }
        }
    }

    static ExecutionData copy(ExecutionData d) {
        return new ExecutionData(d.getId(), d.getName(), d.getProbes().clone());
    }

    // ---- class files ------------------------------------------------------------------------

    static void scan(File location, List<String> changed, Map<String, Candidate> out) throws IOException {
        if (location.isDirectory()) {
            File[] list = location.listFiles();
            if (list == null) {
                fail("cannot list " + location);
            }
            java.util.Arrays.sort(list);
            for (File f : list) {
                scan(f, changed, out);
            }
        } else if (location.getName().endsWith(".class")) {
            consider(Files.readAllBytes(location.toPath()), location.getPath(), changed, out);
        } else if (location.getName().endsWith(".jar") || location.getName().endsWith(".zip")) {
            try (ZipInputStream zip = new ZipInputStream(new BufferedInputStream(new FileInputStream(location)))) {
                for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                    if (e.getName().endsWith(".class") && !e.getName().startsWith("META-INF/")) {
                        consider(readAll(zip), location.getPath() + "@" + e.getName(), changed, out);
                    }
                }
            }
        }
    }

    static void consider(byte[] bytes, String where, List<String> changed, Map<String, Candidate> out) {
        final String[] nameAndSource = new String[2];
        try {
            new ClassReader(bytes).accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public void visit(int version, int access, String name, String sig, String sup, String[] itf) {
                    nameAndSource[0] = name;
                }

                @Override
                public void visitSource(String source, String debug) {
                    nameAndSource[1] = source;
                }
            }, ClassReader.SKIP_CODE | ClassReader.SKIP_FRAMES);
        } catch (RuntimeException e) {
            System.err.println("etip-cov-report: cannot read " + where + ": " + e);
            return;
        }
        String name = nameAndSource[0];
        if (name == null || name.equals("module-info") || name.endsWith("/package-info")) {
            return;
        }
        int slash = name.lastIndexOf('/');
        String pkg = slash >= 0 ? name.substring(0, slash + 1) : "";
        String src = nameAndSource[1];
        if (src == null) {
            // no SourceFile attribute: guess from the top-level class name
            String simple = name.substring(slash + 1);
            int dollar = simple.indexOf('$');
            src = (dollar > 0 ? simple.substring(0, dollar) : simple) + ".java";
        }
        String key = pkg + src;
        for (String c : changed) {
            if (matches(c, key, pkg.isEmpty())) {
                if (out.containsKey(name)) {
                    System.err.println("etip-cov-report: class " + name + " found twice, using " + out.get(name).location);
                } else {
                    out.put(name, new Candidate(name, key, c, bytes, where));
                }
                return;
            }
        }
    }

    static boolean matches(String changed, String key, boolean defaultPackage) {
        if (changed.equals(key)) {
            return true;
        }
        if (!changed.endsWith("/" + key)) {
            return false;
        }
        if (!defaultPackage) {
            return true;
        }
        // a class of the default package: the file must sit directly in a source root
        String parent = changed.substring(0, changed.length() - key.length() - 1);
        return parent.endsWith("/java") || parent.endsWith("/kotlin") || parent.endsWith("/groovy")
            || parent.endsWith("/scala") || parent.equals("java") || parent.equals("src");
    }

    // ---- sealed classes -----------------------------------------------------------------------

    /**
     * The class file without its class-level PermittedSubclasses attribute, or null when it has
     * none: what etip's unsealing agent ({@code etip.cov.unseal.Unseal}, same code) gives JaCoCo,
     * whose 0.8.6 class visitors cannot read that attribute. JaCoCo's class id is the CRC64 of
     * these bytes.
     */
    static byte[] stripPermittedSubclasses(byte[] b) {
        try {
            if (b.length < 10 || u2(b, 6) < 61) {
                return null;
            }
            int count = u2(b, 8);
            int[] utf8 = new int[count];
            int p = 10;
            for (int i = 1; i < count; i++) {
                int tag = b[p] & 0xff;
                switch (tag) {
                    case 1: utf8[i] = p; p += 3 + u2(b, p + 1); break;
                    case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: p += 5; break;
                    case 5: case 6: p += 9; i++; break;
                    case 7: case 8: case 16: case 19: case 20: p += 3; break;
                    case 15: p += 4; break;
                    default: return null;
                }
            }
            p += 6;
            p += 2 + 2 * u2(b, p);
            for (int k = 0; k < 2; k++) {
                int members = u2(b, p);
                p += 2;
                for (int m = 0; m < members; m++) {
                    p += 6;
                    int attrs = u2(b, p);
                    p += 2;
                    for (int a = 0; a < attrs; a++) {
                        p += 6 + u4(b, p + 2);
                    }
                }
            }
            int attrsAt = p;
            int attrs = u2(b, p);
            p += 2;
            for (int a = 0; a < attrs; a++) {
                int len = 6 + u4(b, p + 2);
                int name = u2(b, p);
                if (name > 0 && name < count && utf8[name] != 0
                    && "PermittedSubclasses".equals(new String(b, utf8[name] + 3, u2(b, utf8[name] + 1), StandardCharsets.UTF_8))) {
                    byte[] out = new byte[b.length - len];
                    System.arraycopy(b, 0, out, 0, p);
                    System.arraycopy(b, p + len, out, p, b.length - p - len);
                    out[attrsAt] = (byte) ((attrs - 1) >>> 8);
                    out[attrsAt + 1] = (byte) (attrs - 1);
                    return out;
                }
                p += len;
            }
            return null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    static int u2(byte[] b, int p) {
        return ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff);
    }

    static int u4(byte[] b, int p) {
        return ((b[p] & 0xff) << 24) | ((b[p + 1] & 0xff) << 16) | ((b[p + 2] & 0xff) << 8) | (b[p + 3] & 0xff);
    }

    // ---- helpers ----------------------------------------------------------------------------

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
            b.write(buf, 0, n);
        }
        return b.toByteArray();
    }

    static List<String> readList(String v) throws IOException {
        List<String> list = new ArrayList<>();
        InputStream in = v.equals("-") ? System.in : new FileInputStream(v);
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String l; (l = r.readLine()) != null; ) {
                if (!l.trim().isEmpty()) {
                    list.add(norm(l.trim()));
                }
            }
        } catch (IOException e) {
            fail("cannot read the changed-files list " + v + ": " + e);
        }
        return list;
    }

    static String norm(String p) {
        String s = p.replace('\\', '/');
        while (s.startsWith("./")) {
            s = s.substring(2);
        }
        return s;
    }

    /** A JSON string literal. */
    static String q(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                case '\b': b.append("\\b"); break;
                case '\f': b.append("\\f"); break;
                default:
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    static void fail(String msg) {
        System.err.println("etip-cov-report: " + msg);
        System.exit(2);
    }

    static void usage(String msg) {
        if (msg != null) {
            System.err.println("etip-cov-report: " + msg);
        }
        System.err.println("usage: java -cp <org.jacoco.core.jar:asm.jar:asm-commons.jar:asm-tree.jar> EtipCovReport.java"
            + " --exec FILE|DIR [--exec ...] --classes DIR|JAR [--classes ...]"
            + " [--changed REPO/PATH.java ...] [--changed-list FILE|-]");
        System.exit(msg == null ? 0 : 2);
    }
}
