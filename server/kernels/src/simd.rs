//! Wider SIMD where the CPU has it, chosen at run time.
//!
//! The workspace builds for the baseline x86-64 target, whose widest
//! vectors are SSE2's 4 lanes and which has no fused multiply-add; the
//! loops in this crate, compiled again for AVX2 and FMA, use 8 lanes and
//! may fuse. Whether the CPU has both is checked on each call (the
//! standard library caches the answer).

/// A loop to compile twice, for the baseline target and for AVX2 + FMA.
///
/// Implementations mark [`Kernel::run`] `#[inline(always)]` and call only
/// `#[inline(always)]` functions from it: the AVX2 build exists only where
/// the loop is inlined into [`widest`]'s AVX2 function (a closure would be
/// inlined only while it is small, and silently run as SSE2 code when not).
/// `FMA` says whether `f32::mul_add` is one instruction in this build;
/// without it `mul_add` is a library call, so use `a * b + c` instead.
pub trait Kernel {
    type Output;
    fn run<const FMA: bool>(self) -> Self::Output;
}

/// Runs `kernel` compiled for AVX2 and FMA when the CPU has them, else as
/// built.
#[inline(always)]
pub fn widest<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA, checked just above.
        return unsafe { avx2_fma(kernel) };
    }
    kernel.run::<false>()
}

/// # Safety
/// Only on a CPU with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_fma<K: Kernel>(kernel: K) -> K::Output {
    kernel.run::<true>()
}

/// `a · b + c`, fused into one instruction (and one rounding) when `FMA`.
#[inline(always)]
pub fn multiply_add<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}
