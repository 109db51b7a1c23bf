//! Upload jobs as the dashboard, the API and the CLI see them.

use serde::{Deserialize, Serialize};

/// Where one document of an upload stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileState {
    Queued,
    Extracting,
    Embedding {
        chunks: usize,
    },
    /// Embedded and set aside: the job publishes every staged document of
    /// its version at once when it ends, so until then searches do not
    /// see it (and a job that dies or is cancelled publishes none).
    Staged {
        chunks: usize,
    },
    Stored {
        chunks: usize,
        new_chunks: u64,
    },
    Failed {
        reason: String,
    },
    /// An archive entry docshelf does not read.
    Skipped {
        reason: String,
    },
    /// A crawled page or package file whose content is what the version
    /// already holds (the same bytes, or the server answered `304 Not
    /// Modified`): kept as it is, nothing embedded.
    Unchanged,
    /// A page the version held that its source no longer has (gone from
    /// the site, or answered 404/410): removed when the job publishes.
    Removed {
        reason: String,
    },
}

impl FileState {
    /// The state's name, as its JSON `state` tag spells it.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Extracting => "extracting",
            Self::Embedding { .. } => "embedding",
            Self::Staged { .. } => "staged",
            Self::Stored { .. } => "stored",
            Self::Failed { .. } => "failed",
            Self::Skipped { .. } => "skipped",
            Self::Unchanged => "unchanged",
            Self::Removed { .. } => "removed",
        }
    }

    /// Whether nothing more will happen to this file.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Self::Stored { .. }
                | Self::Failed { .. }
                | Self::Skipped { .. }
                | Self::Unchanged
                | Self::Removed { .. }
        )
    }
}

impl std::fmt::Display for FileState {
    /// The state in words, as the dashboard and the CLI show it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Queued => f.write_str("queued"),
            Self::Extracting => f.write_str("extracting text…"),
            Self::Embedding { chunks } => write!(f, "embedding {chunks} chunks…"),
            Self::Staged { chunks } => {
                write!(f, "staged ({chunks} chunks), published when the job ends")
            }
            Self::Stored { chunks, new_chunks } => {
                write!(f, "stored ({chunks} chunks, {new_chunks} new)")
            }
            Self::Failed { reason } => write!(f, "failed: {reason}"),
            Self::Skipped { reason } => write!(f, "skipped: {reason}"),
            Self::Unchanged => f.write_str("unchanged (kept as stored)"),
            Self::Removed { reason } => write!(f, "removed: {reason}"),
        }
    }
}

/// One document of an upload (an uploaded file, or an entry of an uploaded archive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileProgress {
    pub file_path: String,
    #[serde(flatten)]
    pub state: FileState,
    /// Things worth knowing that did not stop the file (e.g. an unreadable PDF page).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Where a whole job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Running,
    /// Every file is through; what was staged is being published into the
    /// version, in one commit. A job stopped now may or may not have
    /// published (see [`JobState::Indexing`]); it is no longer cancelled.
    Publishing,
    /// Published: every `stored` file is in the version and searchable;
    /// the search indexes are being brought up to date.
    Indexing,
    Done,
    /// Its process stopped (killed, crashed, restarted) before it ended:
    /// nothing it staged was published. `error` says why.
    Interrupted,
    /// Stopped on purpose before it ended, because its version or library
    /// was deleted: nothing it staged was published.
    Cancelled,
    /// Ended without publishing because most of what it fetched failed (a
    /// crawl whose pages mostly failed, a package that could not be
    /// downloaded): `error` says why, and the version is as it was.
    Failed,
}

impl JobState {
    /// The state's name, as its JSON spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Publishing => "publishing",
            Self::Indexing => "indexing",
            Self::Done => "done",
            Self::Interrupted => "interrupted",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
        }
    }

    /// Whether the job has ended (done, interrupted, cancelled or failed): nothing
    /// more will change, and its event stream ends.
    pub const fn is_finished(self) -> bool {
        matches!(
            self,
            Self::Done | Self::Interrupted | Self::Cancelled | Self::Failed
        )
    }
}

/// An upload job and the progress of each of its documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobStatus {
    pub id: String,
    pub library: String,
    pub version: String,
    pub state: JobState,
    pub files: Vec<FileProgress>,
    /// Why the job as a whole failed (e.g. the index could not be refreshed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What to know about the job as a whole: where a source's documents
    /// came from and why, a bound it stopped at, that only a README came in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How many files (pages) the job will take, once known: the pages a
    /// site's sitemaps list, a repository's docs files, an archive's
    /// documents once it is opened (a package's docs entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<usize>,
    /// Seconds left, estimated from the pace so far, while `expected` is
    /// known and files remain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eta_secs: Option<u64>,
}

impl FileState {
    /// Whether the file is through its work (stored, staged, unchanged,
    /// failed, skipped or removed).
    pub fn is_through(&self) -> bool {
        !matches!(
            self,
            Self::Queued | Self::Extracting | Self::Embedding { .. }
        )
    }
}

impl JobStatus {
    /// Ends a job that stopped before it published (`Interrupted`,
    /// `Cancelled`): `error` says why, and every file not yet through
    /// fails with `file_reason`, so no line is left looking as if it were
    /// still on its way.
    pub fn stop(&mut self, state: JobState, error: &str, file_reason: &str) {
        for file in &mut self.files {
            if !file.state.is_final() {
                file.state = FileState::Failed {
                    reason: file_reason.to_owned(),
                };
            }
        }
        self.state = state;
        self.error = Some(error.to_owned());
    }

    /// Files stored and files failed so far.
    /// Files through their work (stored, staged, unchanged, failed,
    /// skipped or removed): what `expected` is counted against.
    pub fn through(&self) -> usize {
        self.files.iter().filter(|f| f.state.is_through()).count()
    }

    pub fn tally(&self) -> (usize, usize) {
        let stored = self
            .files
            .iter()
            .filter(|f| matches!(f.state, FileState::Stored { .. }))
            .count();
        let failed = self
            .files
            .iter()
            .filter(|f| matches!(f.state, FileState::Failed { .. }))
            .count();
        (stored, failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_progress_serialises_flat_with_a_state_tag() {
        let p = FileProgress {
            file_path: "a.md".into(),
            state: FileState::Stored {
                chunks: 3,
                new_chunks: 3,
            },
            warnings: vec![],
        };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["state"], "stored");
        assert_eq!(json["chunks"], 3);
        assert_eq!(json["file_path"], "a.md");
    }
}

/// One uploaded file, as every face hands it to the engine: its name
/// (a path inside the library version, or an archive's name) and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What an accepted upload answers (202): the job to follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UploadAccepted {
    pub job_id: String,
    /// Lets whoever holds it follow this one job's events
    /// (`GET /api/jobs/{id}/events?watch=…`) without the access token: a
    /// browser's `EventSource` cannot send an `Authorization` header, so
    /// under `--auth-reads` the dashboard's progress would otherwise stop.
    /// Random per job, and good for nothing else.
    pub watch_token: String,
}
