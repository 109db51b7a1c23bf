//! Votes on search results, which feed the signal part of the score
//! (see [`crate::scoring::signal`]).

use serde::{Deserialize, Serialize};

/// A user's verdict on one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Vote {
    Like,
    Dislike,
}

/// A vote as a client sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FeedbackRequest {
    pub chunk_id: String,
    pub vote: Vote,
}

/// A chunk's votes so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Votes {
    pub likes: u32,
    pub dislikes: u32,
}

impl Votes {
    /// The signal score these votes give, in [0, 1].
    pub fn signal(&self) -> f32 {
        crate::scoring::signal(self.likes, self.dislikes)
    }
}
