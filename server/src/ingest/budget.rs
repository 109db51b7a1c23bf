//! What one upload job may cost in all, across its files.
//!
//! Archives are bounded one by one (entries, expanded bytes, ratio, depth),
//! but a job of many files, or one archive of many ordinary entries, was
//! not: a 3.7 MB ZIP of 1,000 × 1 MiB entries was reported to pass every
//! per-archive limit and start a job of hours of embedding that grew the
//! server to well over a gigabyte within minutes (docs/benchmarks.md,
//! "Hostile inputs, as reported"). The budget is checked as each upload is
//! extracted, before anything of it is chunked or embedded, and as each
//! document is chunked; what would exceed it fails with a reason that says
//! how to proceed.

/// The budget of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobLimits {
    /// Extracted text, in bytes, over every document of the job.
    pub max_text_bytes: u64,
    /// Chunks over every document of the job.
    pub max_chunks: usize,
    /// How long one uploaded file's extraction may take before the file
    /// fails and the job goes on (see `pipeline`).
    pub extract_deadline: std::time::Duration,
}

impl Default for JobLimits {
    /// 256 MiB of text is a couple of hundred thousand chunks or more,
    /// hours of embedding on a 2-core CPU: larger uploads should come in
    /// several jobs.
    fn default() -> Self {
        Self {
            max_text_bytes: 256 * 1024 * 1024,
            max_chunks: 200_000,
            extract_deadline: std::time::Duration::from_secs(120),
        }
    }
}

/// What a job has used so far.
#[derive(Debug, Default)]
pub struct Budget {
    limits: JobLimits,
    text_bytes: u64,
    chunks: usize,
}

impl Budget {
    pub fn new(limits: JobLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Takes `bytes` of extracted text, or says why the job cannot.
    pub fn take_text(&mut self, bytes: u64) -> Result<(), String> {
        let total = self.text_bytes.saturating_add(bytes);
        if total > self.limits.max_text_bytes {
            return Err(format!(
                "this upload's documents come to {} MiB of text, and one upload may hold {} MiB; upload them in several parts",
                mib(total),
                mib(self.limits.max_text_bytes)
            ));
        }
        self.text_bytes = total;
        Ok(())
    }

    /// Text the job may still take: what its next upload's extraction may
    /// keep before it is stopped (`ArchiveLimits::max_text_bytes`).
    pub fn text_left(&self) -> u64 {
        self.limits.max_text_bytes.saturating_sub(self.text_bytes)
    }

    /// Takes `chunks` more chunks, or says why the job cannot.
    pub fn take_chunks(&mut self, chunks: usize) -> Result<(), String> {
        let total = self.chunks.saturating_add(chunks);
        if total > self.limits.max_chunks {
            return Err(format!(
                "this upload comes to more than {} chunks; upload its documents in several parts",
                self.limits.max_chunks
            ));
        }
        self.chunks = total;
        Ok(())
    }
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1024 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_by_every_file_of_a_job() {
        let mut b = Budget::new(JobLimits {
            max_text_bytes: 3 * 1024 * 1024,
            max_chunks: 10,
            ..JobLimits::default()
        });
        assert!(b.take_text(2 * 1024 * 1024).is_ok());
        let err = b.take_text(2 * 1024 * 1024).unwrap_err();
        assert!(err.contains("4 MiB") && err.contains("3 MiB"), "{err}");
        // A refused take uses nothing.
        assert!(b.take_text(1024 * 1024).is_ok());
        assert_eq!(b.text_left(), 0);
        assert!(b.take_chunks(10).is_ok());
        assert!(b.take_chunks(1).unwrap_err().contains("10 chunks"));
    }
}
