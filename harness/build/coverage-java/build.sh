#!/bin/sh
# etip per-test-class coverage for Java: builds /opt/etip/cov/ from the sources in this folder
# (the env layer copies it to /opt/etip/coverage-java/ and runs `sh /opt/etip/coverage-java/build.sh`
# as root). Offline; needs Debian's libjacoco-java, libasm-java, junit4, Maven 3 and a JDK
# (javac, jar); junit5 is optional (without it there is no JUnit Platform listener).
# When something is missing it says why and exits 0 leaving no /opt/etip/cov.
# See README.md. Usage: sh build.sh [SRC_DIR [OUT_DIR]]
set -u
SRC=${1:-$(cd "$(dirname "$0")" && pwd)}
OUT=${2:-/opt/etip/cov}
J=/usr/share/java

say() { echo "etip: coverage-java: $*"; }

missing=''
for f in org.jacoco.core.jar asm.jar asm-commons.jar asm-tree.jar junit4.jar; do
  [ -f "$J/$f" ] || missing="$missing $J/$f"
done
[ -f "$J/org.jacoco.agent.jar" ] || [ -f "$J/org.jacoco.agent.rt.jar" ] || missing="$missing $J/org.jacoco.agent.jar|org.jacoco.agent.rt.jar"
core=$(ls /usr/share/maven/lib/maven-core-*.jar 2>/dev/null | head -n 1)
[ -n "$core" ] || missing="$missing /usr/share/maven/lib/maven-core-*.jar"
for f in maven-plugin-api-*.jar maven-artifact-*.jar javax.inject.jar slf4j-api.jar; do
  ls /usr/share/maven/lib/$f >/dev/null 2>&1 || missing="$missing /usr/share/maven/lib/$f"
done
command -v javac >/dev/null 2>&1 || missing="$missing javac"
command -v jar >/dev/null 2>&1 || missing="$missing jar"
if [ -n "$missing" ]; then
  say "not built (missing:$missing); no per-test-class coverage in this image"
  exit 0
fi

lib() { ls /usr/share/maven/lib/$1 2>/dev/null | head -n 1; }
TMP=$(mktemp -d /tmp/etip-cov.XXXXXX) || exit 0
LOG=$TMP/log
STAGE=$TMP/out
mkdir -p "$STAGE" "$TMP/listener" "$TMP/ext" "$TMP/agent"

build() {
  set -e
  # 1. The agent. Debian's org.jacoco.agent.jar embeds the upstream agent (jacocoagent.jar:
  #    Premain-Class, JaCoCo core and ASM relocated under org.jacoco.agent.rt.internal_*); use it
  #    when present. Otherwise org.jacoco.agent.rt.jar with a manifest naming the system jars
  #    (classes not relocated: run it with excludes=org.jacoco.*:org.objectweb.*).
  agent_ok=''
  if [ -f "$J/org.jacoco.agent.jar" ]; then
    ( cd "$TMP/agent" && jar xf "$J/org.jacoco.agent.jar" jacocoagent.jar ) || true
    if [ -f "$TMP/agent/jacocoagent.jar" ] \
      && ( cd "$TMP/agent" && jar xf jacocoagent.jar META-INF/MANIFEST.MF && grep -q '^Premain-Class:' META-INF/MANIFEST.MF ); then
      cp "$TMP/agent/jacocoagent.jar" "$STAGE/jacocoagent.jar"
      agent_ok='embedded (relocated) agent of org.jacoco.agent.jar'
    fi
  fi
  if [ -z "$agent_ok" ]; then
    [ -f "$J/org.jacoco.agent.rt.jar" ] || { echo "no usable JaCoCo agent jar"; return 1; }
    cp "$J/org.jacoco.agent.rt.jar" "$STAGE/jacocoagent.jar"
    printf 'Premain-Class: org.jacoco.agent.rt.internal.PreMain\nClass-Path: %s %s %s %s\n' \
      "$J/org.jacoco.core.jar" "$J/asm.jar" "$J/asm-commons.jar" "$J/asm-tree.jar" > "$TMP/agent/manifest.txt"
    jar ufm "$STAGE/jacocoagent.jar" "$TMP/agent/manifest.txt"
    agent_ok='org.jacoco.agent.rt.jar + manifest (not relocated)'
  fi

  # 2. The listeners (JUnit 4 always, JUnit Platform when junit5 is installed).
  lsrc="$SRC/src/listener"
  files="$lsrc/etip/cov/Recorder.java $lsrc/etip/cov/JUnit4Listener.java"
  cp="$J/junit4.jar"
  platform=''
  if [ -f "$J/junit-platform-launcher.jar" ] && [ -f "$J/junit-platform-engine.jar" ] && [ -f "$J/junit-platform-commons.jar" ]; then
    files="$files $lsrc/etip/cov/PlatformListener.java"
    cp="$cp:$J/junit-platform-launcher.jar:$J/junit-platform-engine.jar:$J/junit-platform-commons.jar"
    [ -f "$J/opentest4j.jar" ] && cp="$cp:$J/opentest4j.jar"
    [ -f "$J/apiguardian-api.jar" ] && cp="$cp:$J/apiguardian-api.jar"
    platform=yes
  fi
  javac -nowarn --release 8 -d "$TMP/listener" -cp "$cp" $files
  if [ -n "$platform" ]; then
    mkdir -p "$TMP/listener/META-INF/services"
    cp "$lsrc/META-INF/services/org.junit.platform.launcher.TestExecutionListener" "$TMP/listener/META-INF/services/"
  fi
  jar cf "$STAGE/etip-cov-listener.jar" -C "$TMP/listener" .

  # 3. The Maven core extension.
  javac -nowarn --release 8 -d "$TMP/ext" \
    -cp "$core:$(lib 'maven-plugin-api-*.jar'):$(lib 'maven-artifact-*.jar'):$(lib javax.inject.jar):$(lib slf4j-api.jar)" \
    $(find "$SRC/src/ext" -name '*.java')
  cp -r "$SRC/src/ext/META-INF" "$TMP/ext/"
  jar cf "$STAGE/etip-cov-ext.jar" -C "$TMP/ext" .

  # 4. The unsealing agent (listed before JaCoCo's: JaCoCo 0.8.6 cannot instrument classes with a
  #    PermittedSubclasses attribute, i.e. sealed types and enums with constant bodies at release 17).
  mkdir -p "$TMP/unseal"
  javac -nowarn --release 8 -d "$TMP/unseal" $(find "$SRC/src/unseal" -name '*.java')
  printf 'Premain-Class: etip.cov.unseal.Unseal\n' > "$TMP/unseal.mf"
  jar cfm "$STAGE/etip-cov-unseal.jar" "$TMP/unseal.mf" -C "$TMP/unseal" .

  # 5. The report program (run from source; check that it compiles here).
  mkdir -p "$TMP/report"
  javac -nowarn -d "$TMP/report" -cp "$J/org.jacoco.core.jar:$J/asm.jar:$J/asm-commons.jar:$J/asm-tree.jar" \
    "$SRC/src/report/EtipCovReport.java"
  cp "$SRC/src/report/EtipCovReport.java" "$STAGE/EtipCovReport.java"

  rm -rf "$OUT"
  mkdir -p "$(dirname "$OUT")"
  mv "$STAGE" "$OUT"
  chmod -R a+rX "$OUT"
  echo "agent: $agent_ok"
  [ -n "$platform" ] && echo "listeners: JUnit 4 and JUnit Platform" || echo "listeners: JUnit 4 only (no junit5 jars)"
}

# (not as an `if` condition: that would switch off set -e inside)
( build ) >"$LOG" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
  say "built $OUT ($(tr '\n' ';' <"$LOG" | sed 's/;$//; s/;/; /g'))"
else
  cat "$LOG"
  say "not built (see above); no per-test-class coverage in this image"
  rm -rf "$OUT"
fi
rm -rf "$TMP"
exit 0
