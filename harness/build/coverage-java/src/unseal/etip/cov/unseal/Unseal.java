package etip.cov.unseal;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;

/**
 * A Java agent listed before JaCoCo's: removes the {@code PermittedSubclasses} attribute from the
 * class files it is given, so that JaCoCo 0.8.6 (whose class visitors use the ASM 8 API and throw
 * "PermittedSubclasses requires ASM9") can instrument sealed classes and interfaces and enums with
 * constant bodies compiled for Java 17. The classes lose their sealing at run time
 * ({@code Class.isSealed()} is false; nothing else in Java 17 depends on it). Only for coverage
 * runs. {@code EtipCovReport} applies the same change before computing JaCoCo's class ids.
 */
public final class Unseal implements ClassFileTransformer {
    private Unseal() {}

    public static void premain(String args, Instrumentation inst) {
        inst.addTransformer(new Unseal());
    }

    @Override
    public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd, byte[] b) {
        // not the JDK's own classes (the boot loader's, or JDK tools such as javac on the app loader)
        if (loader == null || redefined != null || name == null || name.startsWith("java/") || name.startsWith("jdk/")
            || name.startsWith("sun/") || name.startsWith("com/sun/tools/") || name.startsWith("com/sun/source/")
            || name.startsWith("com/sun/jdi/")) {
            return null;
        }
        try {
            return strip(b);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** {@code b} without its class-level PermittedSubclasses attribute, or null when it has none. */
    public static byte[] strip(byte[] b) {
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
            if (isName(b, utf8, u2(b, p), "PermittedSubclasses")) {
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
    }

    private static boolean isName(byte[] b, int[] utf8, int index, String name) {
        if (index <= 0 || index >= utf8.length || utf8[index] == 0) {
            return false;
        }
        int at = utf8[index];
        int len = u2(b, at + 1);
        if (len != name.length()) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (b[at + 3 + i] != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static int u2(byte[] b, int p) {
        return ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff);
    }

    private static int u4(byte[] b, int p) {
        return ((b[p] & 0xff) << 24) | ((b[p + 1] & 0xff) << 16) | ((b[p + 2] & 0xff) << 8) | (b[p + 3] & 0xff);
    }
}
