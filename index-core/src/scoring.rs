//! The final score of a hit: relevance blended with recency and feedback.
//!
//! `score = w_cos · relevance + w_rec · recency + w_sig · signal`, with
//! `w_cos = max(0, 1 − (w_rec + w_sig))`, so the weights a caller gives for
//! recency and feedback take their share from relevance and never push the
//! total above 1. All three parts are in [0, 1].

/// Weights of the blended score, as echoed back to the caller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub w_cos: f32,
    pub w_rec: f32,
    pub w_sig: f32,
}

/// Why weights were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightError {
    #[error("{name} must be between 0 and 1 (got {value})")]
    OutOfRange { name: &'static str, value: f32 },
}

impl Weights {
    /// Weights from the optional recency and signal weights of a request.
    pub fn new(w_rec: Option<f32>, w_sig: Option<f32>) -> Result<Self, WeightError> {
        let check = |name, value: Option<f32>| match value {
            None => Ok(0.0),
            Some(v) if v.is_finite() && (0.0..=1.0).contains(&v) => Ok(v),
            Some(v) => Err(WeightError::OutOfRange { name, value: v }),
        };
        let (w_rec, w_sig) = (check("w_rec", w_rec)?, check("w_sig", w_sig)?);
        Ok(Self {
            w_cos: (1.0 - (w_rec + w_sig)).max(0.0),
            w_rec,
            w_sig,
        })
    }

    /// The blended score of a hit.
    pub fn blend(&self, relevance: f32, recency: f32, signal: f32) -> f32 {
        self.w_cos * relevance + self.w_rec * recency + self.w_sig * signal
    }
}

/// How long it takes a document's recency score to halve.
pub const RECENCY_HALF_LIFE_DAYS: f32 = 90.0;

/// Recency in [0, 1]: 1 for a document stored now, halving every
/// [`RECENCY_HALF_LIFE_DAYS`].
pub fn recency(days_old: f32) -> f32 {
    0.5_f32.powf(days_old.max(0.0) / RECENCY_HALF_LIFE_DAYS)
}

/// Feedback in [0, 1]: 0.5 with no votes, towards 1 with likes and 0 with
/// dislikes. Smoothed (one virtual vote each way) so a single vote moves it
/// only part of the way.
pub fn signal(likes: u32, dislikes: u32) -> f32 {
    (likes as f32 + 1.0) / (likes as f32 + dislikes as f32 + 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevance_weight_takes_what_the_others_leave() {
        let w = Weights::new(Some(0.2), Some(0.1)).unwrap();
        assert!((w.w_cos - 0.7).abs() < 1e-6);
        let w = Weights::new(Some(0.8), Some(0.5)).unwrap();
        assert_eq!(w.w_cos, 0.0);
        let w = Weights::new(None, None).unwrap();
        assert_eq!((w.w_cos, w.w_rec, w.w_sig), (1.0, 0.0, 0.0));
        assert_eq!(w.blend(0.8, 0.1, 0.9), 0.8);
    }

    #[test]
    fn weights_out_of_range_are_named() {
        let err = Weights::new(Some(1.5), None).unwrap_err();
        assert_eq!(err.to_string(), "w_rec must be between 0 and 1 (got 1.5)");
        assert!(Weights::new(None, Some(f32::NAN)).is_err());
        assert!(Weights::new(None, Some(-0.1)).is_err());
    }

    #[test]
    fn recency_halves_every_half_life() {
        assert_eq!(recency(0.0), 1.0);
        assert!((recency(90.0) - 0.5).abs() < 1e-6);
        assert!((recency(180.0) - 0.25).abs() < 1e-6);
        assert_eq!(recency(-5.0), 1.0);
    }

    #[test]
    fn signal_moves_with_votes_but_starts_neutral() {
        assert_eq!(signal(0, 0), 0.5);
        assert!(signal(1, 0) > 0.5 && signal(1, 0) < 1.0);
        assert!(signal(0, 3) < signal(0, 1));
        assert!(signal(100, 0) > 0.99);
    }
}
