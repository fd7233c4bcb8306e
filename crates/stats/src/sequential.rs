//! Adaptive rounds: a group-sequential version of JETO's sign test.
//!
//! A test class is first measured for `first` rounds; while it is
//! inconclusive it gets `batch` more rounds at a time, up to `max` rounds.
//! The looks are at `n_1 = first, first + batch, …, max` (the last batch is
//! shorter when `max - first` is not a multiple of `batch`). At look `k` the
//! win count `w_k` of a direction (rounds with `p_j <= (1 - min_impr)·o_j` for
//! "patched faster", roles swapped for "original faster", see
//! [`sign_test_with`](crate::sign_test_with)) is compared with two integers:
//!
//! - **efficacy** `c_k` ([`Look::min_wins`]): significant iff `w_k >= c_k`;
//! - **futility** `a_k` ([`Look::futile_below`]): this direction stops iff
//!   `w_k < a_k` (at the last look everything not significant stops).
//!
//! **Efficacy boundaries (exact α-spending).** Under the null at the margin
//! (true improvement exactly `min_impr`, so `P(win) = 1/2` each round) the
//! win count is a binomial random walk. The `c_k` are computed look by look
//! by dynamic programming over that walk with *exact integer path counts*:
//! `c_k` is the smallest count such that the probability of having crossed
//! the efficacy boundary at any look up to `k`, `P(∃ j <= k: w_j >= c_j)`, is
//! strictly below `α(t_k)`, where `α(t)` is the spending function
//! ([`Spending`]) at information fraction `t_k = n_k / max`, with
//! `α(1) = alpha`. Hence the probability of ever rejecting under the null is
//! `<= alpha` (it is [`Look::alpha_spent`] of the last look), **whatever the
//! futility rule and whenever the procedure stops**: futility is
//! *non-binding* (the `c_k` ignore it), so stopping early can only lower the
//! false-positive rate. [`SequentialDesign::false_positive_rate`] gives the
//! exact rate of the procedure with its futility stops.
//!
//! With `first == max` there is one look and `c` is the smallest count with
//! `P(X >= c) < alpha`, `X ~ Bin(n, 1/2)`, exactly JETO's fixed test (n = 30,
//! alpha = 0.1: `c = 20`, real size 0.0494).
//!
//! **Both directions** use the same design, each on its own win count
//! ([`SequentialDesign::decide_pair`]): the class stops as soon as either
//! direction is significant, or when both directions stop. Because the
//! efficacy bound holds under any stopping rule, each direction's
//! false-positive rate is `<= alpha`, as for the fixed test
//! ([`SequentialDesign::operating_pair`] computes both exactly).
//!
//! **Futility** ([`Futility`]): curtailment (stop when no later look can be
//! reached even by winning every remaining round) and optionally β-spending
//! at a design alternative `q1`: `a_k` is the largest count such that the
//! probability under `P(win) = q1` of having stopped for futility by look `k`
//! is `<= β·t_k^ρ`.
//!
//! **Recommended design** ([`SequentialDesign::recommended`]): chosen by exact
//! computation over a grid (`examples/sequential_design_grid.rs`), see its
//! documentation for the numbers.

use serde::{Deserialize, Serialize};

use crate::big::Big;
use crate::error::StatsError;
use crate::normal::normal_cdf;
use crate::sign::Direction;

/// Largest `max` a design may have (the exact computations are O(max²),
/// [`SequentialDesign::operating_pair`] O(max³)).
pub const MAX_SEQUENTIAL_ROUNDS: usize = 2000;

/// α-spending function `α(t)`: the cumulative false-positive probability
/// allowed by information fraction `t = n_k / max` (`α(0) = 0`, `α(1) = alpha`,
/// nondecreasing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Spending {
    /// Kim–DeMets power family `α·t^ρ` (`ρ > 0`). Small `ρ` spends early
    /// (aggressive early stopping), `ρ = 3` is close to O'Brien–Fleming.
    Power {
        /// Exponent `ρ > 0`.
        rho: f64,
    },
    /// Lan–DeMets Pocock-type `α·ln(1 + (e - 1)·t)`.
    Pocock,
}

impl Spending {
    /// `α(t)` for overall level `alpha`; `t` is clamped into `[0, 1]`.
    pub fn spent(&self, alpha: f64, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        if t >= 1.0 {
            return alpha;
        }
        match *self {
            Spending::Power { rho } => alpha * t.powf(rho),
            Spending::Pocock => alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
        }
    }

    fn check(&self) -> Result<(), StatsError> {
        match *self {
            Spending::Power { rho } if !(rho.is_finite() && rho > 0.0) => Err(
                StatsError::InvalidParameter(format!("spending exponent rho must be > 0, got {rho}")),
            ),
            _ => Ok(()),
        }
    }
}

/// When a direction stops early without being significant. Futility never
/// changes the efficacy boundaries (non-binding), so it can only lower the
/// false-positive rate; it trades a little power for fewer rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Futility {
    /// Curtailment only: stop when even winning every remaining round cannot
    /// reach the efficacy boundary of any later look.
    Curtail,
    /// Curtailment plus β-spending at the design alternative `q1` (the
    /// per-round win probability the design should detect): `a_k` is the
    /// largest count such that `P_q1(stopped for futility by look k) <=
    /// beta·t_k^rho`, `t_k = n_k / max`.
    BetaSpending {
        /// Design alternative, per-round `P(win)` in `(0, 1)`.
        q1: f64,
        /// Total futility probability allowed under `q1`, in `[0, 1)`.
        beta: f64,
        /// Exponent of the spending `beta·t^rho`, `> 0`.
        rho: f64,
    },
}

impl Futility {
    fn check(&self) -> Result<(), StatsError> {
        match *self {
            Futility::Curtail => Ok(()),
            Futility::BetaSpending { q1, beta, rho } => {
                if !(q1 > 0.0 && q1 < 1.0) {
                    return Err(StatsError::InvalidParameter(format!(
                        "futility design alternative q1 must be in (0, 1), got {q1}"
                    )));
                }
                if !((0.0..1.0).contains(&beta)) {
                    return Err(StatsError::InvalidParameter(format!(
                        "futility beta must be in [0, 1), got {beta}"
                    )));
                }
                if !(rho.is_finite() && rho > 0.0) {
                    return Err(StatsError::InvalidParameter(format!(
                        "futility spending exponent rho must be > 0, got {rho}"
                    )));
                }
                Ok(())
            }
        }
    }
}

/// The parameters a [`SequentialDesign`] is computed from (its serialised
/// form, together with the computed looks).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SequentialParams {
    /// Rounds of the first batch (first look), `>= 1`.
    pub first: usize,
    /// Rounds added per further batch, `>= 1`.
    pub batch: usize,
    /// Largest number of rounds (last look), `first <= max <= MAX_SEQUENTIAL_ROUNDS`.
    pub max: usize,
    /// Overall one-sided false-positive bound per direction, in `(0, 1]`
    /// (JETO's `p_val`).
    pub alpha: f64,
    /// α-spending function of the efficacy boundaries.
    pub spending: Spending,
    /// Early stopping without significance.
    pub futility: Futility,
}

/// One look of a design with its α bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// Rounds run so far.
    pub n: usize,
    /// Efficacy boundary `c_k`: significant iff wins `>= min_wins`
    /// (`n + 1` when no outcome can be significant at this look).
    pub min_wins: usize,
    /// Futility boundary `a_k`: the direction stops iff wins `< futile_below`
    /// (at the last look equal to `min_wins`: everything else stops).
    pub futile_below: usize,
    /// `α(t_k)`, the spending function at `t_k = n / max`.
    pub alpha_allowed: f64,
    /// Exact `P(∃ j <= k: w_j >= c_j)` under `P(win) = 1/2`, ignoring
    /// futility (correctly rounded), always `< alpha_allowed` (or equal to
    /// the previous look's value when this look cannot reject).
    pub alpha_spent: f64,
}

/// What one direction does at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeqDecision {
    /// Wins reached the efficacy boundary: this direction is significant.
    Significant,
    /// Inconclusive: run the next batch.
    Continue,
    /// Not significant and no more rounds for this direction (futile, or the
    /// last look was reached).
    Stop,
}

/// What the class does at a look when both directions are tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairDecision {
    /// Run the next batch.
    Continue,
    /// Stop with this verdict.
    Done(Direction),
}

/// Exact operating characteristics of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Operating {
    /// Per-round win probability.
    pub q: f64,
    /// Probability of ending significant.
    pub rejection_probability: f64,
    /// Expected number of rounds run by this direction alone.
    pub expected_rounds: f64,
}

/// Exact operating characteristics of the two-direction procedure
/// ([`SequentialDesign::decide_pair`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairOperating {
    /// Per-round probability that the patched version wins.
    pub q_patched: f64,
    /// Per-round probability that the original version wins.
    pub q_original: f64,
    /// Probability of the verdict "patched faster".
    pub patched_faster: f64,
    /// Probability of the verdict "original faster".
    pub original_faster: f64,
    /// Expected number of rounds run (every round of every batch).
    pub expected_rounds: f64,
}

/// A group-sequential sign test: looks, exact boundaries, decisions and exact
/// operating characteristics. See the [module documentation](self).
///
/// Serialises as its [`SequentialParams`] plus the computed `looks`; it
/// deserialises from the parameters alone (the looks are recomputed, so a
/// stored design cannot be inconsistent).
///
/// ```
/// use etip_stats::{SeqDecision, SequentialDesign};
/// let d = SequentialDesign::recommended(30, 0.1)?;
/// assert!(d.false_positive_rate() <= 0.1);
/// let first = d.looks()[0];
/// assert_eq!(first.n, 30);
/// assert_eq!(d.decide(30, first.min_wins), SeqDecision::Significant);
/// assert_eq!(d.decide(30, 15), SeqDecision::Continue);
/// assert_eq!(d.decide(30, 3), SeqDecision::Stop);
/// // With one look it is JETO's fixed test: 20 wins of 30.
/// let fixed = SequentialDesign::fixed(30, 0.1)?;
/// assert_eq!(fixed.looks()[0].min_wins, 20);
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SequentialParams")]
pub struct SequentialDesign {
    #[serde(flatten)]
    params: SequentialParams,
    looks: Vec<Look>,
}

impl TryFrom<SequentialParams> for SequentialDesign {
    type Error = StatsError;

    fn try_from(p: SequentialParams) -> Result<Self, StatsError> {
        SequentialDesign::new(p.first, p.batch, p.max, p.alpha, p.spending, p.futility)
    }
}

/// `dist ← dist ⊛ Bernoulli(q)`, one round, in place (`dist` grows by one).
fn step_f64(dist: &mut Vec<f64>, q: f64) {
    dist.push(0.0);
    for w in (1..dist.len()).rev() {
        dist[w] = dist[w] * (1.0 - q) + dist[w - 1] * q;
    }
    dist[0] *= 1.0 - q;
}

/// Pascal step on exact path counts, in place (`counts` grows by one).
fn step_big(counts: &mut Vec<Big>) {
    counts.push(Big::zero());
    for w in (1..counts.len()).rev() {
        let (lower, upper) = counts.split_at_mut(w);
        upper[0].add(&lower[w - 1]);
    }
}

impl SequentialDesign {
    /// Computes the design: looks at `first, first + batch, …, max`, exact
    /// efficacy boundaries for `alpha` under `spending`, futility boundaries
    /// under `futility`.
    ///
    /// Errors (`InvalidParameter`): `first == 0`, `batch == 0`,
    /// `max < first`, `max > MAX_SEQUENTIAL_ROUNDS`, `alpha` outside
    /// `(0, 1]`, or invalid spending/futility parameters.
    pub fn new(
        first: usize,
        batch: usize,
        max: usize,
        alpha: f64,
        spending: Spending,
        futility: Futility,
    ) -> Result<SequentialDesign, StatsError> {
        let bad = |msg: String| Err(StatsError::InvalidParameter(msg));
        if first == 0 || batch == 0 {
            return bad(format!(
                "sequential design needs first >= 1 and batch >= 1, got first = {first}, batch = {batch}"
            ));
        }
        if max < first || max > MAX_SEQUENTIAL_ROUNDS {
            return bad(format!(
                "sequential design needs first <= max <= {MAX_SEQUENTIAL_ROUNDS}, got first = {first}, max = {max}"
            ));
        }
        if !(alpha > 0.0 && alpha <= 1.0) {
            return bad(format!("sequential design alpha must be in (0, 1], got {alpha}"));
        }
        spending.check()?;
        futility.check()?;
        let params = SequentialParams {
            first,
            batch,
            max,
            alpha,
            spending,
            futility,
        };
        let mut ns: Vec<usize> = (first..max).step_by(batch).collect();
        ns.push(max);

        // Efficacy: exact path counts of the walk that has not crossed yet.
        let mut looks = Vec::with_capacity(ns.len());
        let mut counts = vec![Big::one()];
        let mut crossed = Big::zero();
        let mut at = 0;
        for &n in &ns {
            for _ in at..n {
                step_big(&mut counts);
            }
            crossed.shl(n - at);
            at = n;
            let allowed = spending.spent(alpha, n as f64 / max as f64);
            let mut min_wins = n + 1;
            for w in (0..=n).rev() {
                let mut t = crossed.clone();
                t.add(&counts[w]);
                if t.to_f64_scaled(n) < allowed {
                    crossed = t;
                    min_wins = w;
                } else {
                    break;
                }
            }
            for c in &mut counts[min_wins..] {
                *c = Big::zero();
            }
            looks.push(Look {
                n,
                min_wins,
                futile_below: 0,
                alpha_allowed: allowed,
                alpha_spent: crossed.to_f64_scaled(n),
            });
        }

        // Futility: curtailment, then β-spending under q1.
        let last = looks.len() - 1;
        for k in 0..last {
            let n = looks[k].n;
            looks[k].futile_below = looks[k + 1..]
                .iter()
                .map(|l| (l.min_wins + n).saturating_sub(l.n))
                .min()
                .unwrap_or(0)
                .min(looks[k].min_wins);
        }
        looks[last].futile_below = looks[last].min_wins;
        if let Futility::BetaSpending { q1, beta, rho } = futility {
            let mut dist = vec![1.0];
            let mut cum = 0.0;
            let mut at = 0;
            for look in looks.iter_mut().take(last) {
                for _ in at..look.n {
                    step_f64(&mut dist, q1);
                }
                at = look.n;
                for d in &mut dist[look.min_wins..] {
                    *d = 0.0;
                }
                let allowed = beta * (look.n as f64 / max as f64).powf(rho);
                let mut mass = 0.0;
                let mut a = 0;
                while a < look.min_wins && cum + mass + dist[a] <= allowed {
                    mass += dist[a];
                    a += 1;
                }
                look.futile_below = look.futile_below.max(a);
                cum += dist[..look.futile_below].iter().sum::<f64>();
                for d in &mut dist[..look.futile_below] {
                    *d = 0.0;
                }
            }
        }
        Ok(SequentialDesign { params, looks })
    }

    /// JETO's fixed test as a one-look design: `n` rounds, significant iff
    /// `P(X >= wins) < alpha`.
    pub fn fixed(n: usize, alpha: f64) -> Result<SequentialDesign, StatsError> {
        SequentialDesign::new(n, 1, n, alpha, Spending::Power { rho: 1.0 }, Futility::Curtail)
    }

    /// The design recommended for adaptive rounds (see the module docs):
    /// batches of `first / 6` rounds (at least 1) up to `4·first` rounds,
    /// α-spending `alpha·t^0.25` and non-binding futility by β-spending
    /// `0.08·t^0.5` at `q1 = 0.65` (the per-round win probability of a true
    /// 10% improvement under 10% log-normal noise with `min_impr = 0.05`).
    ///
    /// For `first = 30`, `alpha = 0.1` (batches of 5 up to 120 rounds):
    /// false-positive rate at the margin 0.0963 (JETO's fixed 30 rounds:
    /// 0.0494), power 0.903 with 45.3 expected rounds for a true 10%
    /// improvement under 10% log-normal noise (fixed 30 rounds: 0.52).
    pub fn recommended(first: usize, alpha: f64) -> Result<SequentialDesign, StatsError> {
        let batch = (first / 6).max(1);
        SequentialDesign::new(
            first,
            batch,
            first.saturating_mul(4),
            alpha,
            Spending::Power { rho: 0.25 },
            Futility::BetaSpending {
                q1: 0.65,
                beta: 0.08,
                rho: 0.5,
            },
        )
    }

    /// The parameters the design was computed from.
    pub fn params(&self) -> SequentialParams {
        self.params
    }

    /// Rounds of the first batch.
    pub fn first(&self) -> usize {
        self.params.first
    }

    /// Rounds per further batch.
    pub fn batch(&self) -> usize {
        self.params.batch
    }

    /// Largest number of rounds.
    pub fn max(&self) -> usize {
        self.params.max
    }

    /// Overall false-positive bound per direction.
    pub fn alpha(&self) -> f64 {
        self.params.alpha
    }

    /// The looks, in order of `n`.
    pub fn looks(&self) -> &[Look] {
        &self.looks
    }

    /// The round counts at which the design looks (`first, first + batch, …, max`).
    pub fn look_rounds(&self) -> impl Iterator<Item = usize> + '_ {
        self.looks.iter().map(|l| l.n)
    }

    /// The look after `n` rounds, if `n` is a look.
    pub fn look_at(&self, n: usize) -> Option<&Look> {
        let k = self.looks.binary_search_by_key(&n, |l| l.n).ok()?;
        self.looks.get(k)
    }

    /// Decision for one direction with `wins` (of `n` rounds, `wins <= n`).
    ///
    /// At a look: `Significant` iff `wins >= min_wins`, else `Stop` at the
    /// last look or when `wins < futile_below`, else `Continue`. Off the looks
    /// nothing can be decided: below `max` the answer is `Continue` (run on
    /// to the next look), above `max` it is `Stop`.
    pub fn decide(&self, n: usize, wins: usize) -> SeqDecision {
        match self.looks.binary_search_by_key(&n, |l| l.n) {
            Ok(k) => {
                let l = &self.looks[k];
                if wins >= l.min_wins {
                    SeqDecision::Significant
                } else if k + 1 == self.looks.len() || wins < l.futile_below {
                    SeqDecision::Stop
                } else {
                    SeqDecision::Continue
                }
            }
            Err(_) if n < self.params.max => SeqDecision::Continue,
            Err(_) => SeqDecision::Stop,
        }
    }

    /// Decision for a class with both directions tested: `PatchedFaster` if
    /// the patched direction is significant, else `OriginalFaster` if the
    /// original direction is, else `NotSignificant` when both directions
    /// stop, else `Continue`. Each direction's false-positive rate is at
    /// most [`alpha`](Self::alpha) (see the module docs).
    pub fn decide_pair(&self, n: usize, wins_patched: usize, wins_original: usize) -> PairDecision {
        let p = self.decide(n, wins_patched);
        let o = self.decide(n, wins_original);
        match (p, o) {
            (SeqDecision::Significant, _) => PairDecision::Done(Direction::PatchedFaster),
            (_, SeqDecision::Significant) => PairDecision::Done(Direction::OriginalFaster),
            (SeqDecision::Stop, SeqDecision::Stop) => PairDecision::Done(Direction::NotSignificant),
            _ => PairDecision::Continue,
        }
    }

    /// Exact probability, at `P(win) = 1/2` (true improvement exactly
    /// `min_impr`), that one direction ends significant, futility stops
    /// included; computed with integer path counts and rounded once.
    /// Always `<=` the last look's `alpha_spent`, which is `< alpha`.
    pub fn false_positive_rate(&self) -> f64 {
        let mut counts = vec![Big::one()];
        let mut rejected = Big::zero();
        let mut at = 0;
        for l in &self.looks {
            for _ in at..l.n {
                step_big(&mut counts);
            }
            rejected.shl(l.n - at);
            at = l.n;
            for c in &mut counts[l.min_wins..] {
                rejected.add(c);
                *c = Big::zero();
            }
            for c in &mut counts[..l.futile_below] {
                *c = Big::zero();
            }
        }
        rejected.to_f64_scaled(self.params.max)
    }

    /// Exact rejection probability and expected rounds of one direction
    /// whose rounds are each won with probability `q` (dynamic programming
    /// over the win count, in f64).
    ///
    /// Errors: `q` outside `[0, 1]`.
    pub fn operating(&self, q: f64) -> Result<Operating, StatsError> {
        if !(0.0..=1.0).contains(&q) {
            return Err(StatsError::InvalidParameter(format!(
                "win probability q must be in [0, 1], got {q}"
            )));
        }
        let mut dist = vec![1.0];
        let (mut rejection, mut rounds) = (0.0, 0.0);
        let mut at = 0;
        for l in &self.looks {
            for _ in at..l.n {
                step_f64(&mut dist, q);
            }
            at = l.n;
            let hit: f64 = dist[l.min_wins..].iter().sum();
            let futile: f64 = dist[..l.futile_below].iter().sum();
            rejection += hit;
            rounds += (hit + futile) * l.n as f64;
            for d in &mut dist[l.min_wins..] {
                *d = 0.0;
            }
            for d in &mut dist[..l.futile_below] {
                *d = 0.0;
            }
        }
        Ok(Operating {
            q,
            rejection_probability: rejection,
            expected_rounds: rounds,
        })
    }

    /// Exact operating characteristics of the two-direction procedure
    /// ([`decide_pair`](Self::decide_pair)) when each round is independently
    /// a patched win with probability `q_patched`, an original win with
    /// probability `q_original`, and neither otherwise (dynamic programming
    /// over both win counts).
    ///
    /// Errors: a probability outside `[0, 1]` or `q_patched + q_original > 1`
    /// (a round can be a win for both only with `min_impr = 0` or a `(0, 0)`
    /// pair under [`TimerRule::Literal`](crate::TimerRule::Literal)).
    pub fn operating_pair(
        &self,
        q_patched: f64,
        q_original: f64,
    ) -> Result<PairOperating, StatsError> {
        let ok = |q: f64| (0.0..=1.0).contains(&q);
        if !(ok(q_patched) && ok(q_original) && q_patched + q_original <= 1.0) {
            return Err(StatsError::InvalidParameter(format!(
                "win probabilities must be in [0, 1] with a sum <= 1, got {q_patched} and {q_original}"
            )));
        }
        let q_none = (1.0 - q_patched - q_original).max(0.0);
        let side = self.params.max + 1;
        // grid[wp * side + wo] = P(wins_patched = wp, wins_original = wo, still running)
        let mut grid = vec![0.0; side * side];
        grid[0] = 1.0;
        let (mut pf, mut of, mut rounds) = (0.0, 0.0, 0.0);
        let mut at = 0;
        for l in &self.looks {
            for n in at..l.n {
                // One round from n to n + 1 rounds; descending order keeps the
                // sources (wp - 1, wo) and (wp, wo - 1) unchanged until read.
                for wp in (0..=n + 1).rev() {
                    for wo in (0..=n + 1 - wp).rev() {
                        let i = wp * side + wo;
                        let mut v = grid[i] * q_none;
                        if wp > 0 {
                            v += grid[i - side] * q_patched;
                        }
                        if wo > 0 {
                            v += grid[i - 1] * q_original;
                        }
                        grid[i] = v;
                    }
                }
            }
            at = l.n;
            for wp in 0..=l.n {
                for wo in 0..=l.n - wp {
                    let i = wp * side + wo;
                    let m = grid[i];
                    if m == 0.0 {
                        continue;
                    }
                    if let PairDecision::Done(d) = self.decide_pair(l.n, wp, wo) {
                        match d {
                            Direction::PatchedFaster => pf += m,
                            Direction::OriginalFaster => of += m,
                            Direction::NotSignificant => {}
                        }
                        rounds += m * l.n as f64;
                        grid[i] = 0.0;
                    }
                }
            }
        }
        Ok(PairOperating {
            q_patched,
            q_original,
            patched_faster: pf,
            original_faster: of,
            expected_rounds: rounds,
        })
    }
}

/// Per-round probability that the patched version wins
/// (`p <= (1 - min_impr)·o`) when each time is log-normal with coefficient of
/// variation `cv` (independently for `o` and `p`) and the true ratio of the
/// patched to the original time is `ratio` (of medians, equivalently of
/// means): `Φ((ln(1 - min_impr) - ln ratio) / (σ√2))`, `σ² = ln(1 + cv²)`.
/// The original version's win probability is the same function at
/// `1 / ratio`. At `ratio = 1 - min_impr` it is exactly 1/2.
///
/// Returns NaN for `ratio <= 0`, `cv < 0`, `min_impr` outside `[0, 1)` or
/// NaN inputs; with `cv = 0` it is 1 or 0.
///
/// ```
/// use etip_stats::lognormal_win_probability;
/// let q = lognormal_win_probability(0.90, 0.10, 0.05);
/// assert!((q - 0.6492).abs() < 1e-4);
/// assert_eq!(lognormal_win_probability(0.95, 0.10, 0.05), 0.5);
/// ```
pub fn lognormal_win_probability(ratio: f64, cv: f64, min_impr: f64) -> f64 {
    if !(ratio > 0.0 && ratio.is_finite() && cv >= 0.0 && cv.is_finite())
        || !(0.0..1.0).contains(&min_impr)
    {
        return f64::NAN;
    }
    let log_margin = (1.0 - min_impr).ln() - ratio.ln();
    if cv == 0.0 {
        return if log_margin >= 0.0 { 1.0 } else { 0.0 };
    }
    let sigma = cv.mul_add(cv, 1.0).ln().sqrt();
    normal_cdf(log_margin / (sigma * std::f64::consts::SQRT_2))
}
