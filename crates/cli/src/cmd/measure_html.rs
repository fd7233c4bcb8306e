//! The HTML report of `etip measure`: a glossary, a summary table, then per ETIP the facts of the run,
//! its classes with their verdicts and, per eligible class (and for the per-round totals), the
//! per-round times of both versions and the distribution of the per-round ratio patched/original.
//!
//! The file is self-contained (no scripts, no external resources) and every text from the
//! measurements is escaped by the report layer.

use etip_core::measure::{ClassRecord, Direction, Measurement, Version};
use etip_report::chart::{
    Marker, ORIGINAL_COLOR, PATCHED_COLOR, RatioPlot, RoundsPlot, Series, format_seconds,
    ratio_plot, rounds_plot,
};
use etip_report::{Align, HtmlReport, Style, Table};

/// Plots are drawn for at most this many classes per ETIP (those with the smallest sign-test p),
/// plus the per-round totals.
const MAX_PLOTTED: usize = 30;

const GLOSSARY: &[(&str, &str)] = &[
    (
        "original, patched",
        "The two versions of an ETIP. Everywhere in this report the original version is blue with \
         circles and the patched version vermillion (orange-red) with squares.",
    ),
    (
        "round",
        "Both versions run all selected tests once, one after the other. Warm-up rounds are discarded; \
         timed rounds are numbered 1..n. The order (which version runs first) alternates or is random; \
         in the plots a filled marker means that version ran first in the round, a hollow one that it \
         ran second.",
    ),
    (
        "class",
        "A test class; its time in a round is the time its test report gives. 'overall' is the \
         per-round total of the eligible classes.",
    ),
    (
        "eligible",
        "The class ran and passed in every timed round of both versions and is not too fast to time. \
         Otherwise the reason: too_fast (median time below the too_fast threshold in both versions), \
         failed (a test of the class failed in some round), missing_in_some_round (no report of the \
         class in some round). Only eligible classes get verdicts and count in 'overall'.",
    ),
    (
        "ratio",
        "patched / original time of one round. Below 1: the patched version was faster in that round.",
    ),
    (
        "sign test wins",
        "patched wins: rounds with patched ≤ (1 − min_impr) × original, i.e. ratio ≤ 1 − min_impr; \
         original wins: rounds with original ≤ (1 − min_impr) × patched, i.e. ratio ≥ 1 / (1 − min_impr). \
         Shown as wins/n over the n rounds judged.",
    ),
    (
        "p (sign test)",
        "Exact one-sided binomial p-value of the wins of that direction: P(X ≥ wins), X ~ Bin(n, 1/2). \
         The verdict is 'patched faster' when the patched p is below p_val, else 'original faster' \
         when the original p is, else 'not significant'. Bold: below p_val.",
    ),
    (
        "resolution tie",
        "Under the timer rule 'resolution' (etip's default), a round in which both times are at or \
         below the report's resolution (e.g. 1 ms) is a tie (column 'ties'): it counts in n but is a \
         win for neither version. Under 'literal' (JETO's rule) such a (0, 0) round is a win for both.",
    ),
    (
        "Mann–Whitney p (MW p)",
        "One-sided Mann–Whitney U test of the two samples of times, ignoring the pairing by round: \
         'patched faster' is small when the original times are stochastically greater, 'original \
         faster' when they are smaller.",
    ),
    (
        "median ratio, 95% CI",
        "Median of the per-round ratios, with a bootstrap 95% confidence interval (rounds resampled as \
         pairs). An interval entirely below 1 − min_impr supports a real improvement.",
    ),
    (
        "Cliff's δ",
        "Effect size from −1 to +1: the share of (original, patched) pairs of times in which the \
         original is slower minus the share in which it is faster. +1: every original time exceeds \
         every patched time.",
    ),
    (
        "adaptive rounds",
        "With a sequential design, each class is judged at planned looks and its verdict is taken at \
         the first look where a direction is significant ('at round k'); later rounds are still shown, \
         after a dashed line in the time plot and hollow in the ratio plot.",
    ),
    (
        "improvement",
        "(Σ original − Σ patched) / Σ original over the judged rounds of the per-round totals.",
    ),
    (
        "A/A",
        "A control run in which both sides ran the original version (in two containers). The \
         'patched' columns then hold the second container's times; any verdict other than 'not \
         significant' points to noise or an order effect, not to the patch.",
    ),
];

fn direction(d: Direction) -> &'static str {
    match d {
        Direction::PatchedFaster => "patched faster",
        Direction::OriginalFaster => "original faster",
        Direction::NotSignificant => "not significant",
    }
}

fn direction_style(d: Direction) -> Option<Style> {
    match d {
        Direction::PatchedFaster => Some(Style::Patched),
        Direction::OriginalFaster => Some(Style::Original),
        Direction::NotSignificant => Some(Style::NoWrap),
    }
}

/// A p-value: three decimals, four below 0.01, scientific below 0.001.
fn p_value(p: f64) -> String {
    if !p.is_finite() {
        "-".into()
    } else if p >= 0.01 {
        format!("{p:.3}")
    } else if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.1e}")
    }
}

/// A ratio with three decimals.
fn ratio(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "-".into()
    }
}

/// A number for the facts: three decimals at most, without trailing zeros.
fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The smaller of the two sign-test p-values (the more significant direction).
fn min_p(c: &ClassRecord) -> f64 {
    c.sign_test
        .as_ref()
        .map_or(f64::INFINITY, |s| s.p_patched.min(s.p_original))
}

/// Whether a class has data to plot: times of both versions in the same number of rounds.
fn plottable(c: &ClassRecord) -> bool {
    c.eligible && !c.original.is_empty() && c.original.len() == c.patched.len()
}

const CLASS_COLUMNS: &[(&str, Align)] = &[
    ("class", Align::Left),
    ("eligible", Align::Left),
    ("verdict", Align::Left),
    ("patched wins", Align::Right),
    ("p patched", Align::Right),
    ("original wins", Align::Right),
    ("p original", Align::Right),
    ("ties", Align::Right),
    ("MW p patched faster", Align::Right),
    ("MW p original faster", Align::Right),
    ("median original", Align::Right),
    ("median patched", Align::Right),
    ("median ratio", Align::Right),
    ("95% CI", Align::Right),
    ("Cliff's δ", Align::Right),
];

fn class_row(c: &ClassRecord) -> Vec<String> {
    let st = c.sign_test.as_ref();
    let mw = c.mann_whitney.as_ref();
    let ef = c.effect.as_ref();
    let dash = || "-".to_string();
    let time = |xs: &[f64]| median(xs).map_or_else(dash, format_seconds);
    vec![
        c.name.clone(),
        if c.eligible {
            "yes".into()
        } else {
            c.excluded.clone().unwrap_or_else(|| "no".into())
        },
        st.map_or_else(dash, |s| {
            let d = direction(s.direction);
            match s.stopped_at {
                Some(k) => format!("{d} (at round {k})"),
                None => d.to_string(),
            }
        }),
        st.map_or_else(dash, |s| format!("{}/{}", s.wins_patched, s.n)),
        st.map_or_else(dash, |s| p_value(s.p_patched)),
        st.map_or_else(dash, |s| format!("{}/{}", s.wins_original, s.n)),
        st.map_or_else(dash, |s| p_value(s.p_original)),
        st.map_or_else(dash, |s| s.ties.to_string()),
        mw.map_or_else(dash, |m| p_value(m.p_patched_faster)),
        mw.map_or_else(dash, |m| p_value(m.p_original_faster)),
        time(&c.original),
        time(&c.patched),
        ef.map(|e| e.median_ratio)
            .or(st.map(|s| s.median_ratio))
            .map_or_else(dash, ratio),
        ef.map_or_else(dash, |e| {
            format!("{}–{}", ratio(e.ratio_ci[0]), ratio(e.ratio_ci[1]))
        }),
        ef.map_or_else(dash, |e| {
            if e.cliffs_delta.is_finite() {
                format!("{:+.2}", e.cliffs_delta)
            } else {
                dash()
            }
        }),
    ]
}

/// The reason an ETIP is not executable, as in the JSON (`test_failed`).
fn reason_name(m: &Measurement) -> String {
    m.reason
        .and_then(|r| serde_json::to_value(r).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown reason".into())
}

/// The names of the two sides: `[original, patched]` (A and B in an A/A run).
fn side_names(m: &Measurement) -> [&'static str; 2] {
    if m.aa {
        ["A (original)", "B (original again)"]
    } else {
        ["original", "patched"]
    }
}

fn facts(m: &Measurement) -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: String| f.push((k.to_owned(), v));
    add(
        "status",
        if m.executable {
            "executable".into()
        } else {
            format!("not executable: {}", reason_name(m))
        },
    );
    if m.aa {
        add(
            "A/A",
            "yes: both sides ran the original version; 'patched' is the second container".into(),
        );
    }
    let env = &m.environment;
    let mut executor = m.executor.clone();
    if let Some(e) = &env.engine {
        executor.push_str(&format!(" ({e})"));
    }
    add("executor", executor);
    let mut machine = Vec::new();
    if let Some(c) = &env.cpu_model {
        machine.push(format!("CPU {c}"));
    }
    if let Some(k) = &env.kernel {
        machine.push(format!("kernel {k}"));
    }
    if !machine.is_empty() {
        add("machine", machine.join(", "));
    }
    let pr = &m.protocol;
    add(
        "rounds",
        format!(
            "{} timed (planned {}{}), {} warm-up",
            m.rounds,
            pr.rounds,
            pr.max_rounds
                .map(|x| format!(", adaptive up to {x}"))
                .unwrap_or_default(),
            m.warmup
        ),
    );
    let firsts = m.order.iter().filter(|v| **v == Version::Patched).count();
    let seq: String = if m.order.len() <= 40 {
        let s: Vec<&str> = m
            .order
            .iter()
            .map(|v| match v {
                Version::Original => "O",
                Version::Patched => "P",
            })
            .collect();
        format!(" (first per round: {})", s.join(" "))
    } else {
        String::new()
    };
    add(
        "order",
        format!(
            "{}{}; patched ran first in {} of {} timed rounds{seq}",
            pr.order,
            pr.seed.map(|s| format!(", seed {s}")).unwrap_or_default(),
            firsts,
            m.order.len()
        ),
    );
    add(
        "thresholds",
        format!(
            "min_impr {} (patched win: ratio ≤ {}; original win: ratio ≥ {}), p_val {} (strict), \
             too_fast below a median of {} in both versions",
            num(pr.min_impr),
            num(1.0 - pr.min_impr),
            num(1.0 / (1.0 - pr.min_impr)),
            num(pr.p_val),
            format_seconds(pr.min_class_secs)
        ),
    );
    let resolution = m.resolution.map(format_seconds);
    add(
        "timer rule",
        match pr.timer_rule.as_str() {
            "resolution" => format!(
                "resolution: rounds with both times ≤ {} are ties",
                resolution
                    .clone()
                    .unwrap_or_else(|| "the resolution".into())
            ),
            "literal" => "literal (JETO): a (0, 0) round is a win for both versions".into(),
            other => other.to_owned(),
        },
    );
    add(
        "report resolution",
        resolution.unwrap_or_else(|| "unknown".into()),
    );
    let cpus = if m.cpus.is_empty() {
        "not pinned".to_owned()
    } else {
        let names = ["original", "patched"];
        m.cpus
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{} {c}", names.get(i).copied().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    add("CPU sets", cpus);
    let mut tests = format!("selection: {}", pr.tests);
    if !m.modules.is_empty() {
        let modules: Vec<&str> = m
            .modules
            .iter()
            .map(|x| if x == "." { ". (root)" } else { x.as_str() })
            .collect();
        tests.push_str(&format!("; modules: {}", modules.join(", ")));
    }
    add("tests", tests);
    add(
        "detectors",
        if m.detectors.is_empty() {
            "none".into()
        } else {
            m.detectors.join(", ")
        },
    );
    for note in &env.notes {
        add("note", note.clone());
    }
    f
}

/// The two plots of one class, side by side.
fn plots(r: &mut HtmlReport, m: &Measurement, c: &ClassRecord) {
    let names = side_names(m);
    let n = c.original.len();
    let first = |v: Version| -> Vec<bool> {
        (0..n)
            .map(|k| m.order.get(k).is_none_or(|f| *f == v))
            .collect()
    };
    let note = |v: Version| -> Vec<String> {
        (0..n)
            .map(|k| match m.order.get(k) {
                Some(f) if *f == v => "ran first".into(),
                Some(_) => "ran second".into(),
                None => String::new(),
            })
            .collect()
    };
    let st = c.sign_test.as_ref();
    let stopped = st.and_then(|s| s.stopped_at).filter(|k| *k < n);
    let cut_label = stopped.map(|k| format!("verdict after round {k}"));
    let plot = rounds_plot(&RoundsPlot {
        series: vec![
            Series {
                label: names[0],
                color: ORIGINAL_COLOR,
                marker: Marker::Circle,
                values: &c.original,
                filled: first(Version::Original),
                notes: note(Version::Original),
            },
            Series {
                label: names[1],
                color: PATCHED_COLOR,
                marker: Marker::Square,
                values: &c.patched,
                filled: first(Version::Patched),
                notes: note(Version::Patched),
            },
        ],
        fill_key: (m.order.len() >= n).then_some(("ran first", "ran second")),
        y_title: "time",
        x_title: "timed round",
        cut: stopped.zip(cut_label.as_deref()),
    });
    let med = |xs: &[f64]| median(xs).map_or("-".into(), format_seconds);
    let what = if c.name == "overall" {
        "the per-round total of the eligible classes".to_owned()
    } else {
        c.name.clone()
    };
    let mut caption = format!(
        "Time of {what} in each timed round. {}: blue circles, median {}; {}: vermillion squares, \
         median {}. Filled: that version ran first in the round.",
        names[0],
        med(&c.original),
        names[1],
        med(&c.patched)
    );
    if let Some(k) = stopped {
        caption.push_str(&format!(
            " The sequential sign test stopped after round {k} (dashed line)."
        ));
    }
    r.begin_row();
    r.figure(&plot, &caption);

    let ratios: Vec<f64> = c
        .original
        .iter()
        .zip(&c.patched)
        .map(|(o, p)| p / o)
        .collect();
    let hidden = ratios
        .iter()
        .filter(|v| !(v.is_finite() && **v > 0.0))
        .count();
    let median_ci = c
        .effect
        .as_ref()
        .map(|e| (e.median_ratio, e.ratio_ci))
        .or_else(|| st.map(|s| (s.median_ratio, [s.median_ratio; 2])));
    let x_title = if m.aa {
        "patched / original per round (A/A: B / A)"
    } else {
        "patched / original per round"
    };
    let short = if m.aa {
        ["A", "B"]
    } else {
        ["original", "patched"]
    };
    let svg = ratio_plot(&RatioPlot {
        ratios: &ratios,
        min_impr: m.protocol.min_impr,
        median_ci,
        x_title,
        names: short,
        judged: st.map(|s| s.n).filter(|k| *k < n),
    });
    let mut caption = format!("Per-round ratio {x_title}");
    if let Some(s) = st {
        caption.push_str(&format!(
            ": {} of {} judged rounds are {} wins (left of the dashed vermillion line), {} {} wins \
             (right of the dashed blue line)",
            s.wins_patched, s.n, short[1], s.wins_original, short[0]
        ));
        if s.ties > 0 {
            caption.push_str(&format!(", {} resolution ties", s.ties));
        }
    }
    caption.push('.');
    if let Some(k) = st.map(|s| s.n).filter(|k| *k < n) {
        caption.push_str(&format!(
            " Rounds after round {k} came after the verdict and are drawn hollow or light."
        ));
    }
    if let Some((med, ci)) = median_ci {
        caption.push_str(&format!(
            " Median {} (95% CI {}–{}).",
            ratio(med),
            ratio(ci[0]),
            ratio(ci[1])
        ));
    }
    if hidden > 0 {
        caption.push_str(&format!(
            " {hidden} round(s) not shown: the original time was 0 (ratio undefined)."
        ));
    }
    r.figure(&svg, &caption);
    r.end_row();
}

/// The whole report.
pub fn report(results: &[Measurement]) -> String {
    let mut r = HtmlReport::new("etip measure");
    r.paragraph(
        "Per ETIP, the tests of the original and the patched version ran in warm-up rounds \
         (discarded) and then in timed rounds, both versions once per round. Per-class times come from \
         the test reports. Verdicts compare the two versions round by round.",
    );
    r.heading(2, "How to read this report");
    r.definitions(GLOSSARY);

    let mut t = Table::new(vec![
        ("etip", Align::Left),
        ("executable", Align::Left),
        ("A/A", Align::Left),
        ("rounds", Align::Right),
        ("eligible classes", Align::Right),
        ("overall verdict", Align::Left),
        ("improvement", Align::Right),
        ("median ratio (95% CI)", Align::Right),
        ("detectors", Align::Left),
        ("reason", Align::Left),
    ]);
    for m in results {
        let o = m.overall.as_ref();
        let st = o.and_then(|o| o.sign_test.as_ref());
        let ef = o.and_then(|o| o.effect.as_ref());
        t.push(vec![
            m.id.clone(),
            if m.executable { "yes" } else { "no" }.into(),
            if m.aa { "A/A" } else { "" }.into(),
            m.rounds.to_string(),
            format!(
                "{} of {}",
                m.classes.iter().filter(|c| c.eligible).count(),
                m.classes.len()
            ),
            st.map_or("-".into(), |s| direction(s.direction).to_string()),
            st.map_or("-".into(), |s| format!("{:.1}%", 100.0 * s.improvement)),
            ef.map_or("-".into(), |e| {
                format!(
                    "{} ({}–{})",
                    ratio(e.median_ratio),
                    ratio(e.ratio_ci[0]),
                    ratio(e.ratio_ci[1])
                )
            }),
            if m.detectors.is_empty() {
                String::new()
            } else if m.detectors.len() <= 3 {
                m.detectors.join(", ")
            } else {
                format!(
                    "{}, … ({} in all)",
                    m.detectors[..3].join(", "),
                    m.detectors.len()
                )
            },
            if m.executable {
                String::new()
            } else {
                match &m.detail {
                    Some(d) => format!("{}: {}", reason_name(m), d.lines().next().unwrap_or("")),
                    None => reason_name(m),
                }
            },
        ]);
    }
    r.heading(2, "Summary");
    r.table_styled(
        &t,
        |i| (!results[i].executable).then_some(Style::Muted),
        |i, col| {
            let st = results[i]
                .overall
                .as_ref()
                .and_then(|o| o.sign_test.as_ref());
            match col {
                1 if !results[i].executable => Some(Style::Strong),
                5 => st.and_then(|s| direction_style(s.direction)),
                _ => None,
            }
        },
    );
    if results.len() > 1 {
        let links: Vec<(String, String)> = results
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("etip-{i}"), m.id.clone()))
            .collect();
        r.links("ETIPs:", &links);
    }

    for (i, m) in results.iter().enumerate() {
        r.heading_id(2, &m.id, &format!("etip-{i}"));
        if !m.executable {
            r.callout(
                Style::Warning,
                &format!(
                    "Not executable ({}): no verdicts. What failed, where:",
                    reason_name(m)
                ),
            );
            r.preformatted(m.detail.as_deref().unwrap_or("(no detail recorded)"));
        }
        r.facts(&facts(m));
        if m.aa {
            r.callout(
                Style::Muted,
                "A/A run: both sides ran the original version, so any significant verdict is noise \
                 or an order effect.",
            );
        }
        if m.classes.is_empty() && m.overall.is_none() {
            continue;
        }
        let rows: Vec<&ClassRecord> = m.overall.iter().chain(&m.classes).collect();
        let mut t = Table::new(CLASS_COLUMNS.to_vec());
        for c in &rows {
            t.push(class_row(c));
        }
        let p_val = m.protocol.p_val;
        let has_overall = m.overall.is_some();
        r.table_styled(
            &t,
            |k| {
                if has_overall && k == 0 {
                    Some(Style::Total)
                } else if !rows[k].eligible {
                    Some(Style::Muted)
                } else {
                    None
                }
            },
            |k, col| {
                let st = rows[k].sign_test.as_ref()?;
                let mw = rows[k].mann_whitney.as_ref();
                let sig = |p: f64| (p < p_val).then_some(Style::Strong);
                match col {
                    2 => direction_style(st.direction),
                    4 => sig(st.p_patched),
                    6 => sig(st.p_original),
                    8 => mw.and_then(|m| sig(m.p_patched_faster)),
                    9 => mw.and_then(|m| sig(m.p_original_faster)),
                    _ => None,
                }
            },
        );

        let mut plotted: Vec<&ClassRecord> = m.classes.iter().filter(|c| plottable(c)).collect();
        let total = plotted.len();
        if total > MAX_PLOTTED {
            let mut by_p = plotted.clone();
            by_p.sort_by(|a, b| min_p(a).total_cmp(&min_p(b)).then(a.name.cmp(&b.name)));
            let keep: std::collections::HashSet<&str> = by_p[..MAX_PLOTTED]
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            plotted.retain(|c| keep.contains(c.name.as_str()));
        }
        let overall = m.overall.as_ref().filter(|c| plottable(c));
        if overall.is_none() && plotted.is_empty() {
            continue;
        }
        if total > MAX_PLOTTED {
            r.callout(
                Style::Muted,
                &format!(
                    "{total} eligible classes: plots below only for overall and the {MAX_PLOTTED} \
                     classes with the smallest sign-test p (either direction), in table order."
                ),
            );
        }
        for c in overall.into_iter().chain(plotted) {
            r.heading(
                3,
                &if c.name == "overall" {
                    format!("{} · overall (sum of the eligible classes)", m.id)
                } else {
                    format!("{} · {}", m.id, c.name)
                },
            );
            plots(&mut r, m, c);
        }
    }
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::measure::{
        EffectRecord, Environment, MannWhitneyRecord, NotExecutable, Protocol, SignTestRecord,
    };
    use etip_stats::{Alternative, MwuMethod, SignTestConfig, TimerRule};

    /// Deterministic noise in [-1, 1).
    fn noise(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// A class's verdicts computed the way `etip measure` does.
    fn judge(name: &str, o: &[f64], p: &[f64], min_impr: f64, p_val: f64) -> ClassRecord {
        let res = 0.001;
        let cfg = SignTestConfig { min_impr, p_val };
        let v = etip_stats::sign_test_with(o, p, &cfg, TimerRule::Resolution(res)).expect("sign");
        let g =
            etip_stats::mann_whitney_u(o, p, Alternative::Greater, MwuMethod::Auto).expect("mw");
        let l = etip_stats::mann_whitney_u(o, p, Alternative::Less, MwuMethod::Auto).expect("mw");
        let ci = etip_stats::paired_ratio_ci(o, p, 0.95, 2000, 7);
        let direction = match v.direction {
            etip_stats::Direction::PatchedFaster => Direction::PatchedFaster,
            etip_stats::Direction::OriginalFaster => Direction::OriginalFaster,
            etip_stats::Direction::NotSignificant => Direction::NotSignificant,
        };
        ClassRecord {
            name: name.into(),
            eligible: true,
            excluded: None,
            sign_test: Some(SignTestRecord {
                direction,
                n: o.len(),
                wins_patched: v.wins_patched,
                p_patched: v.p_patched,
                wins_original: v.wins_original,
                p_original: v.p_original,
                ties: o
                    .iter()
                    .zip(p)
                    .filter(|(a, b)| **a <= res && **b <= res)
                    .count(),
                median_ratio: v.median_ratio,
                improvement: v.improvement,
                stopped_at: None,
            }),
            mann_whitney: Some(MannWhitneyRecord {
                u: g.u,
                p_patched_faster: g.p_value,
                p_original_faster: l.p_value,
                method: "exact".into(),
            }),
            effect: Some(EffectRecord {
                median_ratio: ci.estimate,
                ratio_ci: [ci.lower, ci.upper],
                cliffs_delta: etip_stats::cliffs_delta(o, p).expect("delta"),
            }),
            original: o.to_vec(),
            patched: p.to_vec(),
        }
    }

    /// Per-round times around `base` seconds, `factor` times as long for the patched version, with a
    /// small penalty for the version that runs first (a cold cache).
    fn series(
        base: f64,
        factor: f64,
        order: &[Version],
        seed: &mut u64,
        ms: bool,
    ) -> (Vec<f64>, Vec<f64>) {
        let round = |v: f64| if ms { (v * 1000.0).round() / 1000.0 } else { v };
        order
            .iter()
            .map(|f| {
                let cold = |v: Version| if *f == v { 1.04 } else { 1.0 };
                let o = base * cold(Version::Original) * (1.0 + 0.08 * noise(seed));
                let p = base * factor * cold(Version::Patched) * (1.0 + 0.08 * noise(seed));
                (round(o), round(p))
            })
            .unzip()
    }

    fn measurement(id: &str, rounds: usize, aa: bool) -> Measurement {
        let order: Vec<Version> = (0..rounds)
            .map(|k| {
                if k % 2 == 0 {
                    Version::Patched
                } else {
                    Version::Original
                }
            })
            .collect();
        Measurement {
            schema_version: 1,
            id: id.into(),
            executable: true,
            reason: None,
            detail: None,
            rounds,
            warmup: 1,
            order,
            aa,
            executor: "docker".into(),
            cpus: vec!["2,3".into(), "2,3".into()],
            protocol: Protocol {
                rounds,
                warmup: 1,
                max_rounds: None,
                order: "alternate".into(),
                seed: None,
                min_impr: 0.05,
                p_val: 0.1,
                timer_rule: "resolution".into(),
                min_class_secs: 0.01,
                tests: "modules".into(),
            },
            environment: Environment {
                executor: "docker".into(),
                cpu_model: Some("AMD EPYC 7B13".into()),
                kernel: Some("6.1.0-18-amd64".into()),
                engine: Some("Docker 24.0.7".into()),
                cpus: vec!["2,3".into(), "2,3".into()],
                notes: vec![
                    "both versions' sessions share one CPU set: they never run at the same time"
                        .into(),
                ],
            },
            modules: vec![".".into(), "core".into()],
            resolution: Some(0.001),
            classes: Vec::new(),
            overall: None,
            detectors: Vec::new(),
            round_log: Vec::new(),
        }
    }

    fn with_classes(mut m: Measurement, specs: &[(&str, f64, f64)], seed: u64) -> Measurement {
        let mut seed = seed;
        let (min_impr, p_val) = (m.protocol.min_impr, m.protocol.p_val);
        let n = m.rounds;
        let (mut to, mut tp) = (vec![0.0; n], vec![0.0; n]);
        for &(name, base, factor) in specs {
            let (o, p) = series(base, factor, &m.order, &mut seed, true);
            let mut c = judge(name, &o, &p, min_impr, p_val);
            if base < m.protocol.min_class_secs {
                c = ClassRecord {
                    eligible: false,
                    excluded: Some("too_fast".into()),
                    sign_test: None,
                    mann_whitney: None,
                    effect: None,
                    ..c
                };
            } else {
                for k in 0..n {
                    to[k] += o[k];
                    tp[k] += p[k];
                }
                if c.sign_test.as_ref().map(|s| s.direction) == Some(Direction::PatchedFaster) {
                    m.detectors.push(name.into());
                }
            }
            m.classes.push(c);
        }
        m.overall = Some(judge("overall", &to, &tp, min_impr, p_val));
        m
    }

    /// A realistic sample: an executable ETIP with a faster class, an unchanged one (with a name to
    /// escape), a too_fast and a failed class; a not-executable ETIP; an A/A run.
    fn sample() -> Vec<Measurement> {
        let mut fast = with_classes(
            measurement("mvn-fast-join", 12, false),
            &[
                ("demo.JoinTest", 0.84, 0.62),
                ("demo.Weird<&>Test", 0.31, 1.0),
                ("demo.TinyTest", 0.002, 1.0),
            ],
            42,
        );
        fast.classes.push(ClassRecord {
            name: "demo.FlakyTest".into(),
            eligible: false,
            excluded: Some("failed".into()),
            sign_test: None,
            mann_whitney: None,
            effect: None,
            original: Vec::new(),
            patched: Vec::new(),
        });
        let mut broken = measurement("gradle-broken", 2, false);
        broken.executable = false;
        broken.reason = Some(NotExecutable::TestFailed);
        broken.detail = Some(
            "round 2, patched, class demo.ParserTest: expected:<3> but was:<4>\n\
             \tat demo.ParserTest.parses(ParserTest.java:42)"
                .into(),
        );
        broken.order.truncate(2);
        let aa = with_classes(
            measurement("mvn-fast-join (A/A)", 10, true),
            &[("demo.JoinTest", 0.84, 1.0), ("demo.SortTest", 2.3, 1.0)],
            7,
        );
        vec![fast, broken, aa]
    }

    fn svg_count(html: &str) -> usize {
        html.matches("<svg").count()
    }

    #[test]
    fn sample_report_is_self_contained_escaped_and_plots_eligible_classes() {
        let results = sample();
        let html = report(&results);
        std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"))
            .expect("target dir");
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/measure-report-sample.html"
            ),
            &html,
        )
        .expect("write sample");

        assert!(!html.contains("<script"));
        assert!(!html.contains("http"));
        assert!(!html.contains("src=") && !html.contains("<link") && !html.contains("url("));
        assert!(html.contains("demo.Weird&lt;&amp;&gt;Test"));
        assert!(!html.contains("Weird<&>"));
        // Two plots (times, ratios) per plotted class: fast has overall + 2 eligible classes, the
        // not-executable one none, the A/A one overall + 2.
        assert_eq!(svg_count(&html), 2 * (3 + 3));
        for (a, _) in html.match_indices("<svg") {
            let end = a + html[a..].find("</svg>").expect("closed");
            let svg = &html[a..end];
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }
        assert!(html.contains("not executable: test_failed"));
        assert!(html.contains("expected:&lt;3&gt; but was:&lt;4&gt;"));
        assert!(html.contains("A/A run"));
        assert!(html.contains("patched / original per round"));
        for term in [
            "too_fast",
            "resolution tie",
            "Cliff&#39;s δ",
            "Mann–Whitney",
            "A/A",
        ] {
            assert!(html.contains(term), "{term}");
        }
    }

    #[test]
    fn many_classes_plot_the_most_significant_thirty() {
        let specs: Vec<(String, f64, f64)> = (0..40)
            .map(|k| {
                (
                    format!("demo.C{k:02}Test"),
                    0.2,
                    if k < 5 { 0.6 } else { 1.0 },
                )
            })
            .collect();
        let specs: Vec<(&str, f64, f64)> =
            specs.iter().map(|(n, b, f)| (n.as_str(), *b, *f)).collect();
        let m = with_classes(measurement("many", 10, false), &specs, 3);
        let html = report(&[m]);
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/measure-report-many.html"
            ),
            &html,
        )
        .expect("write");
        assert_eq!(svg_count(&html), 2 * (MAX_PLOTTED + 1));
        assert!(html.contains("40 eligible classes: plots below only for overall and the 30"));
        // The five faster classes have the smallest p and are plotted.
        for k in 0..5 {
            assert!(html.contains(&format!("<h3>many · demo.C{k:02}Test</h3>")));
        }
    }

    /// Edge cases to look at: 100 rounds in random order with a sequential stop, a long class name,
    /// times of ~10 ms at 1 ms resolution (ratio histogram), an outlier round (off the ratio axis),
    /// an original time of 0.
    #[test]
    fn stress_sample_renders() {
        let mut m = measurement("stress", 100, false);
        let mut seed = 11u64;
        m.order = (0..100)
            .map(|_| {
                if noise(&mut seed) < 0.0 {
                    Version::Original
                } else {
                    Version::Patched
                }
            })
            .collect();
        m.protocol.order = "random".into();
        m.protocol.seed = Some(11);
        m.protocol.max_rounds = Some(100);
        m.protocol.rounds = 20;
        let long =
            "org.apache.commons.collections4.map.AbstractReferenceMapConcurrentModificationTest";
        let mut m = with_classes(
            m,
            &[
                (long, 3.2, 0.97),
                ("demo.MicroTest", 0.012, 0.8),
                ("demo.OutlierTest", 0.05, 1.0),
            ],
            5,
        );
        // An outlier round and a zero original time.
        let c = &mut m.classes[2];
        c.patched[7] = c.original[7] * 9.0;
        c.original[9] = 0.0;
        if let Some(st) = m.classes[0].sign_test.as_mut() {
            st.stopped_at = Some(60);
            st.n = 60;
        }
        let html = report(&[m]);
        for (a, _) in html.match_indices("<svg") {
            let end = a + html[a..].find("</svg>").expect("closed");
            assert!(!html[a..end].contains("NaN") && !html[a..end].contains("inf"));
        }
        assert!(html.contains("off scale"));
        assert!(html.contains("1 round(s) not shown"));
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/measure-report-stress.html"
            ),
            html,
        )
        .expect("write");
    }

    /// Renders the report of a real run when its measurements exist (`ETIP_MEASUREMENTS`, default
    /// `/tmp/try/m1/measurements.jsonl`) into `target/measure-report-real.html`.
    #[test]
    fn real_run_renders_when_present() {
        let path = std::env::var("ETIP_MEASUREMENTS")
            .unwrap_or_else(|_| "/tmp/try/m1/measurements.jsonl".into());
        let Ok(text) = std::fs::read_to_string(&path) else {
            return;
        };
        let results: Vec<Measurement> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("measurement"))
            .collect();
        let html = report(&results);
        assert!(!html.contains("NaN") && !html.contains("<script"));
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/measure-report-real.html"
            ),
            html,
        )
        .expect("write");
    }
}
