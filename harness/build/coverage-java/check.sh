#!/bin/bash
# Verifies etip's per-test-class Java coverage (this folder) in a scratch Docker image, offline:
#   harness/build/coverage-java/check.sh [--rounds N] [--clean]
# 1. builds the scratch image etip-scratch/covjava:dev (FROM the offline base image, plus Debian's
#    libjacoco-java and junit5) unless it exists; starts a container; runs build.sh there (timed);
# 2. copies the Maven fixture at step 2-dedup-linear (1-original overlaid with 2-dedup-linear),
#    runs test-compile once, then the timed-run Surefire command plain / with the extension but
#    without etip.coverage.dir / with coverage, checks that the plain and extension-only runs
#    are the same (same tests, no agent, no exec file), reports the coverage of the changed file
#    (found by diffing steps 1 and 2) and checks that TextDedupTest covers the changed method and
#    JoinTest/TrivialTest do not; times plain vs coverage runs (N rounds, alternating);
# 3. a small JUnit 5 project (Surefire's junit-platform provider, and the ConsoleLauncher);
# 4. failure paths: no agent, missing/corrupt exec file, project argLine kept, forkCount=0.
# Exit status 0 when every check passed. The container is removed at the end; the image is kept
# unless --clean. Environment: ETIP_BASE_IMAGE (default etip/base:bookworm-297a457e4d04),
# ETIP_COV_IMAGE (default etip-scratch/covjava:dev).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FIXTURE=$(cd "$HERE/../../../crates/fixtures/repos/maven" && pwd)
BASE=${ETIP_BASE_IMAGE:-etip/base:bookworm-297a457e4d04}
IMAGE=${ETIP_COV_IMAGE:-etip-scratch/covjava:dev}
ROUNDS=3
CLEAN=''
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2;;
    --clean) CLEAN=1; shift;;
    *) echo "usage: $0 [--rounds N] [--clean]"; exit 2;;
  esac
done

# ---- 1. image -------------------------------------------------------------------------------
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "== building $IMAGE from $BASE"
  ctx=$(mktemp -d /tmp/etip-covjava-ctx.XXXXXX)
  # the base image's apt sources, or else the host's (copied, never written here)
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$ctx/host.sources"
  else
    : > "$ctx/host.sources"
  fi
  cat > "$ctx/Dockerfile" <<EOF
FROM $BASE
COPY host.sources /tmp/host.sources
RUN if ! grep -rqsE '^(deb |URIs:)' /etc/apt/sources.list /etc/apt/sources.list.d/; then cp /tmp/host.sources /etc/apt/sources.list.d/debian.sources; fi \\
 && apt-get update && apt-get install -y --no-install-recommends libjacoco-java junit5 && rm -rf /var/lib/apt/lists/* /tmp/host.sources
EOF
  docker build -q -t "$IMAGE" "$ctx" || { echo "FAIL: cannot build $IMAGE"; rm -rf "$ctx"; exit 1; }
  rm -rf "$ctx"
fi

C=etip-covjava-check-$$
cleanup() {
  docker rm -f "$C" >/dev/null 2>&1
  if [ -n "$CLEAN" ]; then docker rmi "$IMAGE" >/dev/null 2>&1 && echo "removed $IMAGE"; fi
}
trap cleanup EXIT
docker run -d --name "$C" --network none "$IMAGE" sleep infinity >/dev/null || exit 1
docker exec "$C" mkdir -p /opt/etip /work/fx /tmp/check
docker cp "$HERE/." "$C:/opt/etip/coverage-java/" >/dev/null
docker cp "$HERE/../maven-ext/." "$C:/opt/etip/surefire-fix/" >/dev/null
docker cp "$FIXTURE/1-original/." "$C:/work/fx/" >/dev/null
docker cp "$FIXTURE/2-dedup-linear/." "$C:/work/fx/" >/dev/null

# The changed source files of step 2: files of 2-dedup-linear that differ from 1-original.
CHANGED=''
while IFS= read -r f; do
  rel=${f#"$FIXTURE/2-dedup-linear/"}
  case "$rel" in src/main/*) ;; *) continue;; esac
  if ! cmp -s "$f" "$FIXTURE/1-original/$rel"; then CHANGED="$CHANGED $rel"; fi
done < <(find "$FIXTURE/2-dedup-linear" -type f | sort)
echo "== changed source files (1-original -> 2-dedup-linear):$CHANGED"

cat > /tmp/etip-covjava-inside.$$ <<'INSIDE'
#!/bin/bash
set -u
CHANGED=$1; ROUNDS=$2
FAILS=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
J=/usr/share/java
JCP=$J/org.jacoco.core.jar:$J/asm.jar:$J/asm-commons.jar:$J/asm-tree.jar
REPORT="java -cp $JCP /opt/etip/cov/EtipCovReport.java"

echo "== env layer: build.sh"
ln -sfn /usr/share/maven-repo /opt/etip/m2
t0=$(now); sh /opt/etip/coverage-java/build.sh; t1=$(now)
echo "build.sh took $(ms $t0 $t1) ms"
ls -l /opt/etip/cov
[ -f /opt/etip/cov/etip-cov-ext.jar ] || { bad "build.sh built nothing"; exit 1; }

# the Surefire stdin fix, as etip's env layer builds it (spec.rs SUREFIRE_FIX_BUILD)
core=$(ls /usr/share/maven/lib/maven-core-*.jar | head -n 1)
( cd /opt/etip/surefire-fix && mkdir -p classes \
  && javac -nowarn --release 8 -d classes -cp "$core:$J/plexus-classworlds.jar:/usr/share/maven/lib/javax.inject.jar:$J/maven-surefire-common.jar" $(find src -name '*.java') \
  && cp -r src/META-INF classes/ && jar cf /opt/etip/surefire-fix.jar -C classes . ) >/tmp/sfx.log 2>&1 \
  || { cat /tmp/sfx.log; echo "(no surefire fix: every run waits 10 s more)"; }
SFX=/opt/etip/surefire-fix.jar
EXTS=$SFX:/opt/etip/cov/etip-cov-ext.jar

cd /work/fx
echo "== fixture: test-compile"
mvn -o -B -q -Dmaven.repo.local=/opt/etip/m2 test-compile >/tmp/tc.log 2>&1 || { cat /tmp/tc.log; bad "test-compile"; exit 1; }

MVN="mvn -o -B -Dmaven.repo.local=/opt/etip/m2 org.apache.maven.plugins:maven-surefire-plugin:test -Dsurefire.runOrder=alphabetical -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false -DtrimStackTrace=false"
tests_of() { grep -oE 'Tests run: [0-9]+.* - in [A-Za-z0-9_.$]+' "$1" | sed -E 's/Time elapsed: [0-9.]+ s//' ; }

echo "== without etip.coverage.dir: nothing changes"
MAVEN_OPTS=-Dmaven.ext.class.path=$SFX $MVN -X >/tmp/plain-X.log 2>&1; rc1=$?
rm -rf /tmp/etip-cov
MAVEN_OPTS=-Dmaven.ext.class.path=$EXTS $MVN -X >/tmp/ext-X.log 2>&1; rc2=$?
[ $rc1 = 0 ] && [ $rc2 = 0 ] && ok "both runs pass" || bad "rc plain=$rc1 ext=$rc2"
if [ "$(tests_of /tmp/plain-X.log)" = "$(tests_of /tmp/ext-X.log)" ]; then ok "same tests: $(tests_of /tmp/ext-X.log | sed 's/.* - in //' | tr '\n' ' ')"; else bad "different tests"; fi
if grep 'Forking command line' /tmp/ext-X.log | grep -q javaagent; then bad "agent in the forked JVM"; else ok "no -javaagent in the forked JVM"; fi
[ -e /tmp/etip-cov ] && bad "/tmp/etip-cov exists" || ok "no exec file"
grep -q '\] etip-cov:' /tmp/ext-X.log && bad "the extension logged something" || ok "the extension printed nothing"
grep -q 'Included /opt/etip/cov/etip-cov-ext.jar' /tmp/ext-X.log && ok "the extension was loaded (maven -X: Included ...etip-cov-ext.jar)" || bad "extension not loaded"

echo "== coverage run"
echo "command: $MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov"
rm -rf /tmp/etip-cov
$MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov >/tmp/cov.log 2>&1 && ok "coverage run passes" || { tail -30 /tmp/cov.log; bad "coverage run failed"; }
grep 'etip-cov' /tmp/cov.log
[ "$(tests_of /tmp/plain-X.log | sed 's/.* - in //')" = "$(tests_of /tmp/cov.log | sed 's/.* - in //')" ] && ok "same test classes as the plain run" || bad "different tests"
ls -l /tmp/etip-cov
args=''; for c in $CHANGED; do args="$args --changed $c"; done
echo "command: $REPORT --exec /tmp/etip-cov/textutil.exec --classes target/classes$args"
$REPORT --exec /tmp/etip-cov/textutil.exec --classes target/classes $args >/tmp/report.jsonl; rc=$?
cat /tmp/report.jsonl
[ $rc = 0 ] || bad "report exit $rc"
python3 - /tmp/report.jsonl <<'PY' || FAILS=$((FAILS + 1))
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def covers(test, method):
    return any(m["name"] == method and m["covered"] for r in rows if r.get("test") == test and "methods" in r for m in r["methods"])
listed = {r["test"] for r in rows if "classes_hit" in r}
bad = 0
for t in ("demo.JoinTest", "demo.TextDedupTest", "demo.TrivialTest"):
    if t not in listed:
        print("FAIL: %s not listed" % t); bad += 1
if covers("demo.TextDedupTest", "dedup"): print("ok: TextDedupTest covers the changed method dedup")
else: print("FAIL: TextDedupTest does not cover dedup"); bad += 1
for t in ("demo.JoinTest", "demo.TrivialTest"):
    if covers(t, "dedup"): print("FAIL: %s covers dedup" % t); bad += 1
    else: print("ok: %s does not cover dedup (it covers join: %s)" % (t.split(".")[1], covers(t, "join")))
sys.exit(1 if bad else 0)
PY

echo "== timing: $ROUNDS rounds, plain (surefire fix) vs coverage (surefire fix + coverage), alternating"
for i in $(seq "$ROUNDS"); do
  for mode in plain cov; do
    rm -rf /tmp/etip-cov
    t0=$(now)
    if [ $mode = plain ]; then
      MAVEN_OPTS=-Dmaven.ext.class.path=$SFX $MVN >/tmp/t.log 2>&1
    else
      $MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov >/tmp/t.log 2>&1
    fi
    t1=$(now)
    echo "$mode round $i: wall $(ms $t0 $t1) ms, Maven $(grep -oE 'Total time: +[0-9.]+ s' /tmp/t.log | grep -oE '[0-9.]+') s," \
      "tests: $(grep -oE 'Time elapsed: [0-9.]+ s - in [A-Za-z.]+' /tmp/t.log | sed -E 's/Time elapsed: ([0-9.]+) s - in demo\.(.*)/\2 \1 s/' | tr '\n' ',' | sed 's/,$//')" \
      | tee -a /tmp/timing.txt
  done
done
python3 - <<'PY'
import re, statistics
rows = [l for l in open("/tmp/timing.txt")]
for mode in ("plain", "cov"):
    wall = [int(re.search(r"wall (\d+) ms", l).group(1)) for l in rows if l.startswith(mode)]
    mvn = [float(re.search(r"Maven ([0-9.]+) s", l).group(1)) for l in rows if l.startswith(mode)]
    print("median %-5s: wall %d ms, Maven %.2f s (n=%d)" % (mode, statistics.median(wall), statistics.median(mvn), len(wall)))
PY

echo "== JUnit 5 project (Surefire 2.22.3 junit-platform provider, offline)"
mkdir -p /tmp/j5/src/main/java/d5 /tmp/j5/src/test/java/d5 && cd /tmp/j5
cat > pom.xml <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>d5</groupId>
  <artifactId>j5demo</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.9.2</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
    </plugins>
  </build>
</project>
EOF
cat > src/main/java/d5/Calc.java <<'EOF'
package d5;

public final class Calc {
    private Calc() {}

    public static int square(int x) {
        return x * x;
    }

    public static int twice(int x) {
        return x + x;
    }

    /** An enum with constant bodies: javac --release 17 makes it sealed (PermittedSubclasses). */
    public enum Op {
        PLUS { public int apply(int a, int b) { return a + b; } },
        TIMES { public int apply(int a, int b) { return a * b; } };

        public abstract int apply(int a, int b);
    }
}
EOF
cat > src/main/java/d5/Other.java <<'EOF'
package d5;

public final class Other {
    private Other() {}

    public static String hello() {
        return "hello";
    }
}
EOF
cat > src/test/java/d5/SquareTest.java <<'EOF'
package d5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SquareTest {
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void squares(int x) {
        assertEquals(x * x, Calc.square(x));
    }

    @Nested
    class Ops {
        @Test
        void times() {
            assertEquals(6, Calc.Op.TIMES.apply(2, 3));
        }
    }
}
EOF
cat > src/test/java/d5/TwiceTest.java <<'EOF'
package d5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TwiceTest {
    static int four;

    @BeforeAll
    static void setUp() {
        four = Calc.twice(2);
    }

    @Test
    void four() {
        assertEquals(4, four);
    }
}
EOF
cat > src/test/java/d5/OtherTest.java <<'EOF'
package d5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class OtherTest {
    @Test
    void hello() {
        assertEquals("hello", Other.hello());
    }
}
EOF
mvn -o -B -q -Dmaven.repo.local=/opt/etip/m2 test-compile >/tmp/tc5.log 2>&1 || { cat /tmp/tc5.log; bad "JUnit 5 test-compile"; }
rm -rf /tmp/etip-cov5
$MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov5 >/tmp/cov5.log 2>&1 && ok "JUnit 5 coverage run passes" || { tail -30 /tmp/cov5.log; bad "JUnit 5 coverage run"; }
grep -E 'Running|Tests run:.*in ' /tmp/cov5.log
grep -q 'PermittedSubclasses requires ASM9' /tmp/cov5.log && bad "JaCoCo failed on a sealed class" || ok "no JaCoCo instrumentation error (sealed enum Calc\$Op unsealed for JaCoCo)"
$REPORT --exec /tmp/etip-cov5 --classes target/classes --changed src/main/java/d5/Calc.java | tee /tmp/report5.jsonl
python3 - /tmp/report5.jsonl <<'PY' || FAILS=$((FAILS + 1))
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def covers(test, cls, method):
    return any(m["name"] == method and m["covered"] for r in rows if r.get("test") == test and r.get("class") == cls for m in r["methods"])
checks = [
    ("SquareTest covers square (parameterized)", covers("d5.SquareTest", "d5/Calc", "square")),
    ("SquareTest covers Calc$Op$2.apply (from its @Nested class)", covers("d5.SquareTest", "d5/Calc$Op$2", "apply")),
    ("SquareTest covers the sealed enum's <clinit>", covers("d5.SquareTest", "d5/Calc$Op", "<clinit>")),
    ("TwiceTest covers twice (@BeforeAll)", covers("d5.TwiceTest", "d5/Calc", "twice")),
    ("TwiceTest does not cover square", not covers("d5.TwiceTest", "d5/Calc", "square")),
    ("OtherTest listed with classes_hit 0", any(r.get("test") == "d5.OtherTest" and r.get("classes_hit") == 0 for r in rows)),
    ("no session for the nested class", not any(r.get("test", "").endswith("$Ops") for r in rows)),
]
bad = 0
for name, good in checks:
    print(("ok: " if good else "FAIL: ") + name)
    bad += not good
sys.exit(1 if bad else 0)
PY
echo "-- the same with the ConsoleLauncher (no Surefire)"
rm -f /tmp/cl.exec
java -javaagent:/opt/etip/cov/etip-cov-unseal.jar "-javaagent:/opt/etip/cov/jacocoagent.jar=destfile=/tmp/cl.exec,append=true,dumponexit=true,sessionid=etip.cov:rest,excludes=etip.cov.*" \
  -jar $J/junit-platform-console-standalone.jar -cp target/classes:target/test-classes:/opt/etip/cov/etip-cov-listener.jar \
  --select-package d5 --disable-banner --details=none >/tmp/cl.log 2>&1 && ok "ConsoleLauncher run passes" || { cat /tmp/cl.log; bad "ConsoleLauncher run"; }
$REPORT --exec /tmp/cl.exec --classes target/classes --changed src/main/java/d5/Calc.java | grep classes_hit

echo "== failure paths"
cd /work/fx
echo "-- listener without agent (JUnitCore with etip.cov.JUnit4Listener, no -javaagent)"
cat > /tmp/RunJ4.java <<'EOF'
public class RunJ4 {
    public static void main(String[] a) throws Exception {
        org.junit.runner.JUnitCore c = new org.junit.runner.JUnitCore();
        c.addListener(new etip.cov.JUnit4Listener());
        org.junit.runner.Result r = c.run(demo.TextDedupTest.class, demo.TrivialTest.class);
        System.out.println("tests run: " + r.getRunCount() + ", failures: " + r.getFailureCount());
    }
}
EOF
java -cp target/classes:target/test-classes:$J/junit4.jar:$J/hamcrest-core.jar:/opt/etip/cov/etip-cov-listener.jar /tmp/RunJ4.java 2>&1 | tee /tmp/noagent.log
[ "$(grep -c 'etip-cov.*WARNING' /tmp/noagent.log)" = 1 ] && grep -q 'failures: 0' /tmp/noagent.log && ok "one warning line, tests unaffected" || bad "no-agent behaviour"
echo "-- report on a missing / a corrupt exec file"
$REPORT --exec /tmp/nope.exec --classes target/classes --changed src/main/java/demo/TextUtil.java; rc=$?
[ $rc = 2 ] && ok "missing exec file: exit 2" || bad "missing exec file: exit $rc"
head -c 100 /etc/os-release > /tmp/bad.exec
$REPORT --exec /tmp/bad.exec --classes target/classes; rc=$?
[ $rc = 2 ] && ok "corrupt exec file: exit 2" || bad "corrupt exec file: exit $rc"
echo "-- the project's argLine is kept (argLine property from the command line)"
rm -rf /tmp/etip-cov
$MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov -DargLine=-Dfoo=bar -X >/tmp/argline.log 2>&1 || bad "argLine run failed"
line=$(grep 'Forking command line' /tmp/argline.log | head -n 1)
echo "$line" | grep -o "java' .* '-jar'"
echo "$line" | grep -q "'-Dfoo=bar' '-javaagent:/opt/etip/cov/etip-cov-unseal.jar' '-javaagent:/opt/etip/cov/jacocoagent.jar=" && ok "argLine = project argLine + agents" || bad "argLine not kept"
echo "-- forkCount=0"
rm -rf /tmp/etip-cov
$MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov -DforkCount=0 >/tmp/fork0.log 2>&1 || bad "forkCount=0 run failed"
grep 'etip-cov' /tmp/fork0.log
$REPORT --exec /tmp/etip-cov --classes target/classes --changed src/main/java/demo/TextUtil.java | grep -q '"test":"demo.TextDedupTest"' && ok "forkCount=0 forced to 1, sessions recorded" || bad "forkCount=0"
echo "-- agent jar missing"
rm -rf /tmp/etip-cov
$MVN -Dmaven.ext.class.path=$EXTS -Detip.coverage.dir=/tmp/etip-cov -Detip.coverage.agent=/nope/agent.jar >/tmp/noagentjar.log 2>&1 && bad "ran without agent" || ok "the build fails: $(grep -o 'etip-cov: coverage impossible[^(]*' /tmp/noagentjar.log | head -n 1)"

echo
[ $FAILS = 0 ] && echo "ALL CHECKS PASSED" || echo "$FAILS CHECK(S) FAILED"
exit $FAILS
INSIDE
docker cp /tmp/etip-covjava-inside.$$ "$C:/tmp/check/inside.sh" >/dev/null
rm -f /tmp/etip-covjava-inside.$$
docker exec "$C" bash /tmp/check/inside.sh "$CHANGED" "$ROUNDS"
