//! Helpers the random-edit tests of the window judgements share (`tests/window.rs` for Java,
//! `tests/python_window.rs` for Python).

/// A small deterministic generator (64-bit LCG, high bits).
pub struct Rng(pub u64);

impl Rng {
    /// A number in `0..n` (0 when `n` is 0).
    pub fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Where the identifiers of a line end.
pub fn word_ends(line: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(i);
        } else {
            i += 1;
        }
    }
    out
}
