//! The HTML report of `etip measure`: a glossary, a summary table, then per ETIP the facts of the run,
//! its classes with their verdicts and, per eligible class (and for the per-round totals), the
//! per-round times of both versions and the distribution of the per-round ratio patched/original.
//!
//! The file is self-contained (no scripts, no external resources) and every text from the
//! measurements is escaped by the report layer.

use crate::chart::{
    Marker, ORIGINAL_COLOR, PATCHED_COLOR, RatioPlot, RoundsPlot, Series, format_seconds,
    ratio_plot, rounds_plot,
};
use crate::{Align, HtmlReport, Style, Table};
use etip_core::measure::Version;
use etip_records::measure::{ClassRecord, Measurement};
use etip_stats::Direction;

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
    // Rounds whose ratio cannot be drawn: a patched time of 0 (below the report's resolution: the
    // ratio is 0) or an original time of 0 (no ratio).
    let zero_patched = ratios.iter().filter(|v| **v == 0.0).count();
    let undefined = ratios.iter().filter(|v| !v.is_finite()).count();
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
    if zero_patched > 0 {
        caption.push_str(&format!(
            " {zero_patched} round(s) not shown: the patched time was 0 (below the report's \
             resolution), a ratio of 0."
        ));
    }
    if undefined > 0 {
        caption.push_str(&format!(
            " {undefined} round(s) not shown: the original time was 0 (ratio undefined)."
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
mod tests;
