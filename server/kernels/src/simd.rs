//! Wider SIMD where the CPU has it, chosen at run time.
//!
//! The workspace builds for the baseline x86-64 target, whose widest
//! vectors are SSE2's 4 lanes and which has no fused multiply-add; the
//! loops in this crate are compiled again for AVX2 + FMA (8 lanes), and
//! those that ask for it ([`Kernel::AVX512`]) for AVX-512 (16 lanes) too.
//! The widest build the CPU runs is picked on each call (the feature checks
//! are cached).
//!
//! AVX-512 is opt-in because the compiler's 16-lane builds of the f32
//! loops did not pay on this project's machines: AMD's Zen 4 runs a 512-bit
//! multiply-add as two 256-bit halves, so the arithmetic is no faster, and
//! the 16-lane build of the few-token product (8-column panels) turned its
//! loads and stores into gathers and scatters and made search queries many
//! times slower (docs/benchmarks.md, "Reduced precision"). What pays is new
//! instructions and registers, not width: the bf16 and int8 products'
//! tiles are written for AVX-512 BF16 and VNNI directly (`reduced`), and
//! the few-token product's for AVX-512's 32 registers (`packed`).
//!
//! `DOCSHELF_KERNEL_ISA` (`baseline`, `avx2` or `avx512`) caps the choice,
//! read once per process: the tests and benches use it to run the narrower
//! builds on a machine that has the wider ones.

use std::sync::OnceLock;

/// A loop to compile once per build in [`Isa`].
///
/// Implementations mark [`Kernel::run`] `#[inline(always)]` and call only
/// `#[inline(always)]` functions from it: a wider build exists only where
/// the loop is inlined into [`widest`]'s function for that build (a closure
/// would be inlined only while it is small, and silently run as SSE2 code
/// when not). `FMA` says whether `f32::mul_add` is one instruction in this
/// build; without it `mul_add` is a library call, so use `a * b + c`
/// instead.
pub trait Kernel {
    type Output;
    /// Whether an AVX-512 build of this loop is worth running where the CPU
    /// has AVX-512; set only where measured.
    const AVX512: bool = false;
    fn run<const FMA: bool>(self) -> Self::Output;
}

/// The builds of a [`Kernel`], narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// The target as built (SSE2 on x86-64).
    Baseline,
    /// AVX2 and FMA.
    Avx2,
    /// AVX-512 F, BW, DQ and VL (with AVX2 and FMA).
    Avx512,
}

impl Isa {
    /// The widest build this CPU runs, under `DOCSHELF_KERNEL_ISA`'s cap.
    pub fn current() -> Self {
        static CURRENT: OnceLock<Isa> = OnceLock::new();
        *CURRENT.get_or_init(|| {
            let cap = match std::env::var("DOCSHELF_KERNEL_ISA").as_deref() {
                Ok("baseline") => Isa::Baseline,
                Ok("avx2") => Isa::Avx2,
                _ => Isa::Avx512,
            };
            Self::supported()
                .iter()
                .copied()
                .filter(|&isa| isa <= cap)
                .max()
                .unwrap_or(Isa::Baseline)
        })
    }

    /// Every build this CPU can run, narrowest first.
    pub fn supported() -> &'static [Self] {
        static SUPPORTED: OnceLock<Vec<Isa>> = OnceLock::new();
        SUPPORTED.get_or_init(|| {
            let mut builds = vec![Isa::Baseline];
            #[cfg(target_arch = "x86_64")]
            {
                use std::is_x86_feature_detected as has;
                if has!("avx2") && has!("fma") {
                    builds.push(Isa::Avx2);
                    if has!("avx512f") && has!("avx512bw") && has!("avx512dq") && has!("avx512vl") {
                        builds.push(Isa::Avx512);
                    }
                }
            }
            builds
        })
    }
}

/// Runs `kernel` compiled for the widest build the CPU has ([`Isa::current`])
/// and the kernel takes.
#[inline(always)]
pub fn widest<K: Kernel>(kernel: K) -> K::Output {
    let isa = match Isa::current() {
        Isa::Avx512 if !K::AVX512 => Isa::Avx2,
        isa => isa,
    };
    run_on(isa, kernel)
}

/// Runs `kernel` compiled for `isa`, which the caller took from
/// [`Isa::current`] or [`Isa::supported`].
#[inline(always)]
pub fn run_on<K: Kernel>(isa: Isa, kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY: `Isa::supported` found the CPU's features for these builds.
        Isa::Avx512 if Isa::supported().contains(&Isa::Avx512) => return unsafe { avx512(kernel) },
        // SAFETY: as above.
        Isa::Avx2 | Isa::Avx512 if Isa::supported().contains(&Isa::Avx2) => {
            return unsafe { avx2_fma(kernel) }
        }
        _ => {}
    }
    let _ = isa;
    kernel.run::<false>()
}

/// # Safety
/// Only on a CPU with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_fma<K: Kernel>(kernel: K) -> K::Output {
    kernel.run::<true>()
}

/// # Safety
/// Only on a CPU with AVX-512 F, BW, DQ and VL, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
unsafe fn avx512<K: Kernel>(kernel: K) -> K::Output {
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
