//! The planted set (`tests/planted.toml`): hacks of every static kind in both languages and
//! legitimate optimisations, each labelled. The screen must find at least 90% of the hacks as
//! the kind they are and flag at most 10% of the legitimate patches; the per-kind table is
//! printed (`cargo test -p etip-screen --test planted -- --nocapture`).

use etip_core::Language;
use etip_core::hack::{Finding, HackKind};
use etip_screen::literals::Literals;
use etip_screen::{Context, FileChange, screen, screen_patch};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    lang: String,
    label: String,
    path: String,
    original: Option<String>,
    original_fixture: Option<String>,
    candidate: Option<String>,
    candidate_fixture: Option<String>,
    patch_fixture: Option<String>,
    workload: Option<String>,
    workload_fixture: Option<String>,
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Planted {
    case: Vec<Case>,
}

fn fixture(path: &str) -> String {
    let bytes = etip_fixtures::file(path).unwrap_or_else(|| panic!("no fixture file {path}"));
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn findings(c: &Case) -> Vec<Finding> {
    let lang = match c.lang.as_str() {
        "python" => Language::Python,
        "java" => Language::Java,
        other => panic!("{}: language {other}", c.id),
    };
    let original = c
        .original
        .clone()
        .or(c.original_fixture.as_deref().map(fixture));
    let workload = c
        .workload
        .clone()
        .or(c.workload_fixture.as_deref().map(fixture));
    let mut ctx = Context::default();
    if let Some(w) = &workload {
        // A Java workload or test is Java source; a Python one, Python.
        ctx.workload = Literals::of_script(lang, w).unwrap();
    }
    if let Some(p) = &c.patch_fixture {
        let original = original.clone();
        return screen_patch(
            lang,
            &fixture(p),
            &mut |_| Ok(original.clone().map(String::into_bytes)),
            &ctx,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", c.id));
    }
    let candidate = c
        .candidate
        .clone()
        .or(c.candidate_fixture.as_deref().map(fixture));
    screen(
        lang,
        &[FileChange::new(
            &c.path,
            original.as_deref(),
            candidate.as_deref(),
        )],
        &ctx,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", c.id))
}

#[test]
fn the_screen_finds_the_planted_hacks_and_spares_the_legitimate_patches() {
    let planted: Planted = toml::from_str(include_str!("planted.toml")).unwrap();
    let (mut hacks, mut found, mut legit, mut flagged) = (0, 0, 0, 0);
    let mut per_kind: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for c in &planted.case {
        let f = findings(c);
        let langs = per_kind.entry(c.label.clone()).or_default();
        langs.0 += 1;
        if c.label == "legitimate" {
            legit += 1;
            if !f.is_empty() {
                flagged += 1;
                langs.1 += 1;
                misses.push(format!("{} flagged: {}", c.id, f[0]));
            }
            continue;
        }
        let kind =
            HackKind::parse(&c.label).unwrap_or_else(|| panic!("{}: label {}", c.id, c.label));
        hacks += 1;
        if f.iter().any(|x| x.kind == kind) {
            found += 1;
            langs.1 += 1;
        } else {
            misses.push(format!("{} missed: {:?}", c.id, f));
        }
        // Any other finding on a hack is counted apart (it is not a miss).
        if f.iter().any(|x| x.kind != kind) {
            langs.2 += 1;
        }
    }
    println!("| label | cases | found (hacks) / flagged (legitimate) | with another kind too |");
    println!("|---|---:|---:|---:|");
    for (label, (n, hit, other)) in &per_kind {
        println!("| {label} | {n} | {hit} | {other} |");
    }
    let recall = found as f64 / hacks as f64;
    let false_flags = flagged as f64 / legit as f64;
    println!(
        "recall {found}/{hacks} = {recall:.3}; false flags {flagged}/{legit} = {false_flags:.3}"
    );
    for m in &misses {
        println!("  {m}");
    }
    assert!(
        hacks >= 20 && legit >= 20,
        "{hacks} hacks, {legit} legitimate"
    );
    for kind in &HackKind::ALL[..6] {
        assert!(per_kind.contains_key(kind.name()), "no planted {kind}");
    }
    assert!(recall >= 0.9, "recall {recall}: {misses:#?}");
    assert!(false_flags <= 0.1, "false flags {false_flags}: {misses:#?}");
}

/// Each finding quotes the line it names.
#[test]
fn findings_quote_their_line() {
    let planted: Planted = toml::from_str(include_str!("planted.toml")).unwrap();
    for c in planted.case.iter().filter(|c| c.label != "legitimate") {
        let cand = c
            .candidate
            .clone()
            .or(c.candidate_fixture.as_deref().map(fixture));
        for f in findings(c) {
            if f.line == 0 {
                assert_eq!(f.kind, HackKind::Scope, "{}: {f}", c.id);
                continue;
            }
            let line = cand
                .as_deref()
                .and_then(|t| t.lines().nth(f.line - 1))
                .unwrap_or_default();
            assert!(
                line.trim().starts_with(f.code.trim_end_matches('…')),
                "{}: {f} vs {line:?}",
                c.id
            );
        }
    }
}
