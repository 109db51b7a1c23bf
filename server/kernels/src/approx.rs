//! `exp` and `erf` in forms the compiler can vectorise.
//!
//! The standard library's `f32::exp` and libm's `erff` are calls into
//! scalar code with branches, so a loop over a slice of them runs one
//! element at a time. These are branch-free polynomial forms of the same
//! functions: written as plain arithmetic on `f32` and its bits, a loop
//! over them compiles to SIMD instructions. The tests below check them
//! against `std` and `libm`: `exp` within 4e-7 relative (a few units in the
//! last place), `erf` within 6.5e-7 absolute, and GELU within 3e-7 of the
//! activation's scale, far inside the exactness test's cosine ≥ 0.9999.

/// `e^x` for `x` in `[-87, 88]`; inputs beyond that range are clamped, so
/// the result stays finite and never denormal (`e^-87` ≈ 1.6e-38 is
/// already nothing next to the softmax's largest term, which is 1).
///
/// Range reduction: `x = n·ln 2 + r` with `n` an integer and
/// `|r| ≤ ln 2 / 2`, so `e^x = 2^n · e^r`, where `2^n` is built directly in
/// the float's exponent bits and `e^r` is its Taylor series to the 7th
/// power (the first dropped term is below 5e-9 on that interval).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Adding 1.5·2^23 pushes the fraction bits out of an f32, which rounds
    // to the nearest integer with no branch or conversion instruction.
    const ROUND: f32 = 12_582_912.0;
    // ln 2 split in two, so `n · LN2_HIGH` is exact for |n| < 2^8.
    const LN2_HIGH: f32 = 0.693_145_75;
    const LN2_LOW: f32 = 1.428_606_8e-6;

    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = (x - n * LN2_HIGH) - n * LN2_LOW;

    let mut p = 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;

    // The low bits of `shifted` hold n (two's complement around ROUND's
    // bits); move n + 127 into the exponent field to get 2^n.
    let n_bits = shifted.to_bits().wrapping_sub(ROUND.to_bits());
    let scale = f32::from_bits(n_bits.wrapping_add(127) << 23);
    p * scale
}

/// The error function, with an absolute error below 6.5e-7 (largest near
/// 0, where GELU scales it by `x / 2`, so GELU's own error stays below
/// 3e-7).
///
/// Abramowitz and Stegun's formula 7.1.26 (Handbook of Mathematical
/// Functions, 1964): for `x ≥ 0`, `erf x ≈ 1 − t·P(t)·e^(−x²)` with
/// `t = 1 / (1 + p·x)` and `P` a quartic; odd symmetry gives `x < 0`.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_8,
        -1.453_152_1,
        1.061_405_4,
    ];
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let magnitude = 1.0 - poly * exp(-a * a);
    magnitude.copysign(x)
}

/// BERT's exact GELU, `x · Φ(x) = ½·x·(1 + erf(x / √2))` (not the tanh
/// approximation, which the checkpoint was not trained with).
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `points + 1` evenly spaced values from `lo` to `hi`.
    fn grid(lo: f32, hi: f32, points: usize) -> impl Iterator<Item = f32> {
        (0..=points).map(move |i| lo + (hi - lo) * i as f32 / points as f32)
    }

    #[test]
    fn exp_matches_std_to_a_few_ulps() {
        let mut worst = 0.0f64;
        for x in grid(-87.0, 88.0, 2_000_000) {
            let want = f64::from(x).exp();
            let relative = ((f64::from(exp(x)) - want) / want).abs();
            worst = worst.max(relative);
        }
        assert!(worst < 4e-7, "worst relative error {worst:e}");
    }

    #[test]
    fn exp_is_exact_at_zero_and_clamps_outside_its_range() {
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) > 0.0 && exp(-1000.0) < 1e-37);
        assert!(exp(1000.0).is_finite());
        assert!(exp(f32::NEG_INFINITY) >= 0.0);
    }

    #[test]
    fn erf_matches_libm() {
        let mut worst = 0.0f32;
        for x in grid(-6.0, 6.0, 2_000_000) {
            worst = worst.max((erf(x) - libm::erff(x)).abs());
        }
        assert!(worst < 6.5e-7, "worst absolute error {worst:e}");
        assert!(erf(0.0).abs() < 1e-7);
        assert_eq!(erf(10.0), 1.0);
        assert_eq!(erf(-10.0), -1.0);
    }

    #[test]
    fn gelu_matches_the_exact_definition() {
        let mut worst = 0.0f64;
        for x in grid(-12.0, 12.0, 1_000_000) {
            let exact = libm::erf(f64::from(x) / std::f64::consts::SQRT_2);
            let want = 0.5 * f64::from(x) * (1.0 + exact);
            // Relative to the activation's scale: an f32 near 12 has an
            // ulp of 1e-6 by itself.
            worst = worst.max((f64::from(gelu(x)) - want).abs() / want.abs().max(1.0));
        }
        assert!(worst < 3e-7, "worst error {worst:e}");
    }
}
