//! Agreement between two rankings of the same submissions: Spearman's ρ, discordant pairs, rank moves.

use serde::Serialize;

/// How far two rankings of the same items agree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Number of items ranked by both.
    pub n: usize,
    /// Spearman's rank correlation (average ranks for ties, as `scipy.stats.spearmanr`); `None` when it
    /// is undefined (fewer than 2 items, or one ranking is constant).
    pub spearman_rho: Option<f64>,
    /// Pairs ordered one way by the first ranking and the other way by the second (ties count neither).
    pub discordant_pairs: usize,
    /// n(n-1)/2.
    pub total_pairs: usize,
    /// The item whose rank changes most, with its ranks (1 = best) under both rankings.
    pub largest_move: Option<RankMove>,
}

/// One item's rank under two rankings (1 = best; ties share the average rank).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankMove {
    /// The item.
    pub item: String,
    /// Rank under the first ranking.
    pub from: f64,
    /// Rank under the second ranking.
    pub to: f64,
}

/// Ranks (1 = largest value) with ties given their average rank.
pub fn descending_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = avg;
        }
        i = j + 1;
    }
    ranks
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let ma = a.iter().sum::<f64>() / n;
    let mb = b.iter().sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| (sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0))
}

/// Compares two scorings of the same items (higher is better in both). `items`, `a` and `b` are
/// parallel.
pub fn agreement(items: &[String], a: &[f64], b: &[f64]) -> Agreement {
    assert_eq!(items.len(), a.len(), "items and first scores are parallel");
    assert_eq!(items.len(), b.len(), "items and second scores are parallel");
    let n = items.len();
    let ra = descending_ranks(a);
    let rb = descending_ranks(b);
    let mut discordant = 0;
    for i in 0..n {
        for j in i + 1..n {
            let da = a[i].total_cmp(&a[j]) as i8;
            let db = b[i].total_cmp(&b[j]) as i8;
            if a[i] != a[j] && b[i] != b[j] && da != db {
                discordant += 1;
            }
        }
    }
    let largest_move = (0..n)
        .max_by(|&i, &j| {
            (ra[i] - rb[i])
                .abs()
                .total_cmp(&(ra[j] - rb[j]).abs())
                .then_with(|| items[j].cmp(&items[i]))
        })
        .map(|i| RankMove {
            item: items[i].clone(),
            from: ra[i],
            to: rb[i],
        });
    Agreement {
        n,
        spearman_rho: if n >= 2 { pearson(&ra, &rb) } else { None },
        discordant_pairs: discordant,
        total_pairs: n * n.saturating_sub(1) / 2,
        largest_move,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    #[test]
    fn identical_rankings_agree_fully() {
        let a = [0.3, 0.1, 0.2, 0.05];
        let g = agreement(&names(4), &a, &a);
        assert_eq!(g.spearman_rho, Some(1.0));
        assert_eq!(g.discordant_pairs, 0);
        assert_eq!(g.total_pairs, 6);
        assert_eq!(g.largest_move.map(|m| m.from - m.to), Some(0.0));
    }

    #[test]
    fn reversed_rankings_disagree_fully() {
        let a = [4.0, 3.0, 2.0, 1.0];
        let b = [1.0, 2.0, 3.0, 4.0];
        let g = agreement(&names(4), &a, &b);
        assert_eq!(g.spearman_rho, Some(-1.0));
        assert_eq!(g.discordant_pairs, 6);
        let m = g.largest_move.expect("four items");
        assert_eq!((m.item.as_str(), m.from, m.to), ("s0", 1.0, 4.0));
    }

    #[test]
    fn spearman_with_ties_matches_scipy() {
        // scipy.stats.spearmanr([1, 2, 2, 3, 5], [2, 1, 4, 4, 5]).statistic = 0.7631578947368421
        let a = [1.0, 2.0, 2.0, 3.0, 5.0];
        let b = [2.0, 1.0, 4.0, 4.0, 5.0];
        let rho = agreement(&names(5), &a, &b).spearman_rho.expect("defined");
        assert!((rho - 0.763_157_894_736_842_1).abs() < 1e-12, "{rho}");
        assert_eq!(descending_ranks(&a), vec![5.0, 3.5, 3.5, 2.0, 1.0]);
    }

    #[test]
    fn one_swap_is_one_discordant_pair() {
        let a = [3.0, 2.0, 1.0];
        let b = [2.0, 3.0, 1.0];
        let g = agreement(&names(3), &a, &b);
        assert_eq!(g.discordant_pairs, 1);
        assert_eq!(g.spearman_rho, Some(0.5));
    }
}
