//! A minimal unsigned big integer (little-endian base 2^64): just enough for
//! exact binomial sums and exact path counts of the ±1 random walk behind the
//! sign test, with one correctly rounded conversion `self · 2^-n` to f64.

/// Little-endian base-2^64 natural number, just enough for exact binomial sums.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Big(Vec<u64>);

impl Big {
    pub(crate) fn zero() -> Big {
        Big(vec![0])
    }

    pub(crate) fn one() -> Big {
        Big(vec![1])
    }

    pub(crate) fn pow2(n: usize) -> Big {
        let mut limbs = vec![0u64; n / 64 + 1];
        limbs[n / 64] = 1u64 << (n % 64);
        Big(limbs)
    }

    pub(crate) fn mul_small(&mut self, m: u64) {
        let mut carry: u128 = 0;
        for limb in &mut self.0 {
            let v = u128::from(*limb) * u128::from(m) + carry;
            *limb = v as u64;
            carry = v >> 64;
        }
        if carry > 0 {
            self.0.push(carry as u64);
        }
    }

    /// Division by `d`, which must divide `self` exactly.
    pub(crate) fn div_exact_small(&mut self, d: u64) {
        let mut rem: u128 = 0;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 64) | u128::from(*limb);
            *limb = (cur / u128::from(d)) as u64;
            rem = cur % u128::from(d);
        }
        debug_assert_eq!(rem, 0, "binomial recurrence divides exactly");
        self.trim();
    }

    pub(crate) fn add(&mut self, other: &Big) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut carry = false;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            let (s1, c1) = limb.overflowing_add(o);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *limb = s2;
            carry = c1 || c2;
        }
        if carry {
            self.0.push(1);
        }
    }

    /// `self -= other`, requires `self >= other`.
    pub(crate) fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            let (d1, b1) = limb.overflowing_sub(o);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *limb = d2;
            borrow = b1 || b2;
        }
        debug_assert!(!borrow, "subtrahend larger than minuend");
        self.trim();
    }

    fn trim(&mut self) {
        while self.0.len() > 1 && self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// Number of significant bits (0 for zero; leading zero limbs are ignored).
    pub(crate) fn bits(&self) -> usize {
        match self.0.iter().rposition(|&l| l != 0) {
            Some(i) => i * 64 + (64 - self.0[i].leading_zeros() as usize),
            None => 0,
        }
    }

    /// `self · 2^-n` as f64, correctly rounded (barring subnormal results):
    /// the 64 leading bits, with a sticky bit for the rest, are rounded once
    /// by the conversion and then scaled exactly.
    pub(crate) fn to_f64_scaled(&self, n: usize) -> f64 {
        let bits = self.bits();
        if bits == 0 {
            return 0.0;
        }
        let shift = bits.saturating_sub(64);
        // Top 64 bits (bits shift..shift+64), with a sticky bit for everything below them.
        let (limb, off) = (shift / 64, shift % 64);
        let mut top = self.0[limb] >> off;
        if off > 0
            && let Some(&next) = self.0.get(limb + 1)
        {
            top |= next << (64 - off);
        }
        let sticky = self.0[..limb].iter().any(|&l| l != 0)
            || (off > 0 && self.0[limb] & ((1u64 << off) - 1) != 0);
        if sticky {
            top |= 1;
        }
        libm::scalbn(top as f64, shift as i32 - n as i32)
    }

    /// `self · 2^s`.
    pub(crate) fn shl(&mut self, s: usize) {
        if self.bits() == 0 || s == 0 {
            return;
        }
        let (limbs, bits) = (s / 64, s % 64);
        if bits > 0 {
            let mut carry = 0u64;
            for limb in &mut self.0 {
                let v = *limb;
                *limb = (v << bits) | carry;
                carry = v >> (64 - bits);
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        if limbs > 0 {
            self.0.splice(0..0, std::iter::repeat_n(0u64, limbs));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_add_and_scale() {
        let mut x = Big::one();
        x.shl(100);
        assert_eq!(x, Big::pow2(100));
        let mut y = Big::zero();
        y.shl(70);
        assert_eq!(y.to_f64_scaled(0), 0.0);
        let mut z = Big::one();
        z.mul_small(3);
        z.shl(63);
        z.shl(2);
        // 3 · 2^65 · 2^-66 = 1.5
        assert_eq!(z.to_f64_scaled(66), 1.5);
        z.add(&Big::pow2(65));
        assert_eq!(z.to_f64_scaled(66), 2.0);
        // Rounding: 2^70 + 2^17 + 1 is just above the halfway point between two
        // doubles (ulp 2^18 at 2^70), so it rounds up; 2^70 + 2^17 is a tie, to even.
        let mut r = Big::pow2(70);
        r.add(&Big::pow2(17));
        assert_eq!(r.to_f64_scaled(70), 1.0);
        r.add(&Big::one());
        assert_eq!(r.to_f64_scaled(70), 1.0 + 2f64.powi(-52));
        // Leading zero limbs do not count.
        assert_eq!(Big(vec![5, 0, 0]).bits(), 3);
        assert_eq!(Big(vec![5, 0, 0]).to_f64_scaled(1), 2.5);
    }
}
