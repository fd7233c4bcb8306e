//! The dataset card (`README.md`) of an export: what the dataset is, the counts at each stage,
//! how the ETIPs were mined and measured (as their records say), the columns, how to use it, and
//! the ETIPs with their speedups.

use super::{ExportSummary, Images, TASKS_JSONL, TASKS_PARQUET};
use etip_core::candidate::Candidate;
use etip_records::measure::Measurement;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// A measurement setting as the card shows it.
type Setting = fn(&&Measurement) -> Option<String>;

fn opt(n: Option<usize>) -> String {
    n.map_or_else(|| "—".into(), |n| n.to_string())
}

/// The distinct values of `f` over `items`, joined (`a, b`), or `—`.
fn distinct<T>(items: &[T], f: impl Fn(&T) -> Option<String>) -> String {
    let set: BTreeSet<String> = items.iter().filter_map(f).collect();
    if set.is_empty() {
        "—".into()
    } else {
        set.into_iter().collect::<Vec<_>>().join(", ")
    }
}

pub(crate) fn card(
    s: &ExportSummary,
    measured: &[&Measurement],
    candidates: Option<&BTreeMap<String, Candidate>>,
    images: &Images,
) -> String {
    let mut o = String::new();
    let name = std::path::Path::new(&s.out).file_name().map_or_else(
        || "etip benchmark".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let _ = writeln!(o, "# {name}\n");
    let _ = writeln!(
        o,
        "{} execution-time improvement patches (ETIPs), exported by etip {} on {} (`--keep {}`: {}).\n",
        s.exported.len(),
        env!("CARGO_PKG_VERSION"),
        time::OffsetDateTime::now_utc().date(),
        s.keep.as_str(),
        match s.keep {
            super::Keep::Improved =>
                "measured executable, and the patched version significantly faster overall",
            super::Keep::Executable => "measured executable, whatever the verdict",
            super::Keep::Built => "built, measured or not",
        }
    );
    let _ = writeln!(o, "## Files\n");
    let _ = writeln!(
        o,
        "- `{TASKS_JSONL}`: one task per line, SWE-bench's schema with etip's columns (below).\n- `{TASKS_PARQUET}`: the same records; lists and objects are JSON text, as in SWE-bench's own Parquet files."
    );
    match images {
        Images::Save => {
            let _ = writeln!(
                o,
                "- `images/*.tar`: the instance images, one `docker save` archive per environment layer (`docker load -i images/<file>.tar`); each task's `image_archive` names its archive."
            );
        }
        Images::Push(r) => {
            let _ = writeln!(
                o,
                "- The instance images are in the registry `{r}`; each task's `image_digest` is its reference by digest."
            );
        }
        Images::None => {
            let _ = writeln!(
                o,
                "- No image archives: each task's `image` names the image on the machine that built it."
            );
        }
    }

    let c = &s.counts;
    let _ = writeln!(o, "\n## Counts at each stage\n");
    let _ = writeln!(o, "| stage | ETIPs |\n|---|---:|");
    for (stage, n) in [
        ("mined candidates", opt(c.mined)),
        ("classified as about execution time", opt(c.classified_yes)),
        ("given to `etip build`", c.to_build.to_string()),
        ("built", c.built.to_string()),
        ("measured", opt(c.measured)),
        ("executable", opt(c.executable)),
        ("improved (overall sign test)", opt(c.improved)),
        ("exported", c.exported.to_string()),
    ] {
        let _ = writeln!(o, "| {stage} | {n} |");
    }
    if !s.left_out.is_empty() {
        let _ = writeln!(o, "\nLeft out:\n");
        for l in &s.left_out {
            let _ = writeln!(o, "- `{}`: {}", l.id, l.why.replace('\n', " "));
        }
    }

    if let Some(cands) = candidates {
        let cs: Vec<&Candidate> = cands.values().collect();
        let _ = writeln!(o, "\n## Mining\n");
        let _ = writeln!(o, "| setting | value |\n|---|---|");
        let _ = writeln!(
            o,
            "| repositories | {} |",
            distinct(&cs, |c| c.repo.clone())
        );
        let _ = writeln!(
            o,
            "| languages | {} |",
            distinct(&cs, |c| Some(c.language.to_string()))
        );
        let _ = writeln!(
            o,
            "| classifier | {} |",
            distinct(&cs, |c| c
                .classification
                .as_ref()
                .map(|x| x.classifier.clone()))
        );
        let dates: BTreeSet<&str> = cs.iter().map(|c| c.author_date.as_str()).collect();
        if let (Some(first), Some(last)) = (dates.first(), dates.last()) {
            let _ = writeln!(o, "| commits from | {first} to {last} |");
        }
        let linked = cs.iter().filter(|c| c.issue.is_some()).count();
        let _ = writeln!(o, "| linked to an issue | {linked} of {} |", cs.len());
    }

    if !measured.is_empty() {
        let _ = writeln!(o, "\n## Measurement\n");
        let _ = writeln!(o, "| setting | value |\n|---|---|");
        let rows: [(&str, Setting); 11] = [
            ("timed rounds", |m| Some(m.protocol.rounds.to_string())),
            ("warm-up rounds", |m| Some(m.protocol.warmup.to_string())),
            ("order", |m| Some(m.protocol.order.clone())),
            ("minimal improvement per round", |m| {
                Some(m.protocol.min_impr.to_string())
            }),
            ("significance level", |m| Some(m.protocol.p_val.to_string())),
            ("timer rule", |m| Some(m.protocol.timer_rule.clone())),
            ("detectors timed", |m| {
                let kinds: BTreeSet<&str> = m.classes.iter().map(|c| c.kind.as_str()).collect();
                Some(kinds.into_iter().collect::<Vec<_>>().join(" + "))
            }),
            ("test selection", |m| {
                let tests = m.classes.iter().any(|c| c.kind.is_test());
                Some(if tests {
                    m.protocol.tests.clone()
                } else {
                    format!("{} (no test timed)", m.protocol.tests)
                })
            }),
            ("executor", |m| Some(m.environment.executor.clone())),
            ("CPU", |m| m.environment.cpu_model.clone()),
            ("engine", |m| m.environment.engine.clone()),
        ];
        for (k, f) in rows {
            let _ = writeln!(o, "| {k} | {} |", distinct(measured, f));
        }
        let _ = writeln!(
            o,
            "\nEach round times both versions, each in its own container, the first alternating from round to round; a version wins a round when it takes at most (1 − minimal improvement) of the other's time; the sign test over the rounds gives the verdict, the bootstrap the 95 % interval of the median ratio (patched / original)."
        );
    }

    let _ = writeln!(o, "\n## Tasks\n");
    let _ = writeln!(
        o,
        "| task | repo | speedup | verdict | detected by |\n|---|---|---:|---|---|"
    );
    for e in &s.exported {
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} | {} |",
            e.id,
            e.repo.as_deref().unwrap_or("—"),
            e.speedup.map_or_else(|| "—".into(), |x| format!("{x:.2}×")),
            e.verdict.as_deref().unwrap_or("—"),
            if e.detected_by.is_empty() {
                "—".into()
            } else {
                e.detected_by
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
    }

    let _ = writeln!(o, "\n## Columns\n");
    let _ = writeln!(
        o,
        "SWE-bench's: {}.\n\netip's:\n",
        etip_tasks::export::SWEBENCH_COLUMNS
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(o, "| column | meaning |\n|---|---|");
    for (c, meaning) in etip_tasks::export::ETIP_COLUMNS {
        let _ = writeln!(o, "| `{c}` | {meaning} |");
    }
    let _ = writeln!(
        o,
        "\nMined ETIPs change no tests: `test_patch` is null and `FAIL_TO_PASS` empty; the tests that time them are in `detectors`.\n"
    );

    let _ = writeln!(o, "## Using it\n");
    let _ = writeln!(
        o,
        "```\netip import --format swebench {TASKS_JSONL} --source CLONES/ --out etips.jsonl   # back into etip\netip build --etips etips.jsonl --out build/\netip sandbox ID --etips build/status.jsonl                           # a container an agent works in\netip eval --etips build/status.jsonl --predictions preds.jsonl --out eval/\n```"
    );
    o
}
