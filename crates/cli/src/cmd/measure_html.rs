//! The HTML report of `etip measure`: a summary table, then per ETIP its classes with their verdicts
//! and, per eligible class, the per-round times of both versions and the distribution of the
//! per-round ratio patched/original.

use etip_core::measure::{ClassRecord, Direction, Measurement};
use etip_report::{Align, HtmlReport, Table};

fn direction(d: Direction) -> &'static str {
    match d {
        Direction::PatchedFaster => "patched faster",
        Direction::OriginalFaster => "original faster",
        Direction::NotSignificant => "not significant",
    }
}

fn class_row(c: &ClassRecord) -> Vec<String> {
    let st = c.sign_test.as_ref();
    let mw = c.mann_whitney.as_ref();
    let ef = c.effect.as_ref();
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
    vec![
        c.name.clone(),
        if c.eligible {
            "yes".into()
        } else {
            c.excluded.clone().unwrap_or_else(|| "no".into())
        },
        st.map_or("-".into(), |s| direction(s.direction).to_string()),
        st.map_or("-".into(), |s| format!("{}/{}", s.wins_patched, s.n)),
        f(st.map(|s| s.p_patched), 4),
        st.map_or("-".into(), |s| format!("{}/{}", s.wins_original, s.n)),
        f(st.map(|s| s.p_original), 4),
        f(mw.map(|m| m.p_patched_faster), 4),
        f(ef.map(|e| e.median_ratio), 3),
        ef.map_or("-".into(), |e| format!("{:.3}–{:.3}", e.ratio_ci[0], e.ratio_ci[1])),
        f(ef.map(|e| e.cliffs_delta), 2),
    ]
}

/// The whole report.
pub fn report(results: &[Measurement]) -> String {
    let mut r = HtmlReport::new("etip measure");
    r.paragraph(
        "Each ETIP's tests ran in a warm-up round (discarded) and then in timed rounds that \
         alternate which version goes first. Per-class times come from the XML reports. The sign \
         test counts the rounds in which one version took at most (1 − min_impr) of the other's \
         time; p is the exact one-sided binomial p-value; Mann–Whitney p is one-sided (original \
         slower). The ratio is patched/original per round (below 1: patched faster), with a \
         bootstrap 95% interval; Cliff's δ is +1 when every original time exceeds every patched time.",
    );
    let mut t = Table::new(vec![
        ("etip", Align::Left),
        ("executable", Align::Left),
        ("rounds", Align::Right),
        ("overall", Align::Left),
        ("improvement", Align::Right),
        ("detectors", Align::Left),
        ("reason", Align::Left),
    ]);
    for m in results {
        let st = m.overall.as_ref().and_then(|o| o.sign_test.as_ref());
        t.push(vec![
            m.id.clone(),
            if m.executable { "yes" } else { "no" }.into(),
            m.rounds.to_string(),
            st.map_or("-".into(), |s| direction(s.direction).to_string()),
            st.map_or("-".into(), |s| format!("{:.1}%", 100.0 * s.improvement)),
            m.detectors.join(", "),
            m.detail
                .as_deref()
                .map(|d| d.lines().next().unwrap_or("").to_string())
                .unwrap_or_default(),
        ]);
    }
    r.heading(2, "Summary");
    r.table(&t);
    for m in results {
        r.heading(2, &m.id);
        r.paragraph(&format!(
            "executor {}{}; {} timed rounds, {} warm-up; order {}; min_impr {}, p_val {}, timer rule {}{}",
            m.executor,
            if m.aa { " (A/A: both sides ran the original)" } else { "" },
            m.rounds,
            m.warmup,
            m.protocol.order,
            m.protocol.min_impr,
            m.protocol.p_val,
            m.protocol.timer_rule,
            m.resolution
                .map(|r| format!(", report resolution {r} s"))
                .unwrap_or_default()
        ));
        if m.classes.is_empty() {
            continue;
        }
        let mut t = Table::new(vec![
            ("class", Align::Left),
            ("eligible", Align::Left),
            ("sign test", Align::Left),
            ("wins patched", Align::Right),
            ("p patched", Align::Right),
            ("wins original", Align::Right),
            ("p original", Align::Right),
            ("Mann–Whitney p", Align::Right),
            ("median ratio", Align::Right),
            ("95% CI", Align::Right),
            ("Cliff's δ", Align::Right),
        ]);
        for c in m.overall.iter().chain(&m.classes) {
            t.push(class_row(c));
        }
        r.table(&t);
    }
    r.finish()
}
