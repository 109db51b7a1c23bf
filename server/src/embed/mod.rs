//! Text embedding with all-MiniLM-L6-v2, run by burn.
//!
//! One public face: [`Embedder::load`] once, then [`Embedder::embed`] batches
//! of texts into 384-d unit vectors, and [`Embedder::backend`] says what runs
//! them. The output matches sentence-transformers' `encode(...,
//! normalize_embeddings=True)` (tested against committed reference vectors):
//! WordPiece tokens truncated at 256, BERT, mean pooling over the attention
//! mask, L2 normalisation.
//!
//! - [`device`]: picks the compute backend (wgpu GPU, or burn's CPU backend).
//! - [`tokenize`]: the tokenizer and per-batch padding.
//! - [`bert`]: the network and its weight loading.
//! - [`cross_encoder`]: the same network scoring (query, passage) pairs, for
//!   the reranker a user supplies.
//! - [`batching`]: batches of similar length, split across CPU cores.
//! - [`projection`]: the network's matrix products and how each batch runs them.
//! - [`precision`]: f32, bf16 or int8 projections on the CPU.
//! - [`kernels`]: CPU kernels for the steps burn's CPU backend runs slowly.
//! - [`queue`]: coalesces concurrent requests into batches on one worker.

mod batching;
mod bert;
pub mod cross_encoder;
pub mod device;
mod kernels;
pub mod precision;
mod projection;
pub mod queue;
mod tokenize;

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::tensor::{Int, Tensor, TensorData};

pub use device::{Backend, DeviceChoice};
pub use precision::Precision;
pub use queue::{EmbedQueue, QueueStats};

/// Dimensions of an embedding.
pub const DIM: usize = 384;

// The contract's query vectors (`SearchParams::embedding`) are checked
// against the model's dimension.
const _: () = assert!(DIM == index_core::search::EMBEDDING_DIM);

/// Longest input, in tokens (sentence-transformers' `max_seq_length` for this model).
pub const MAX_TOKENS: usize = 256;

/// Texts per forward pass on the CPU. Larger batches stop paying there; 32
/// is sentence-transformers' default too.
pub const DEFAULT_BATCH: usize = 32;

/// Texts per forward pass on a GPU: small passes leave a card idle, so it
/// takes far more than the CPU (measured in docs/benchmarks.md, "The
/// embedder on a GPU"); a pass that cannot get its memory is split (see
/// `forward_padded`).
pub const GPU_BATCH: usize = 256;

/// One embedding: a unit vector of [`DIM`] floats.
pub type Embedding = Vec<f32>;

/// Why embedding failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the model directory {dir} lacks {missing} (install it with `make setup` or scripts/fetch-model.sh)")]
    MissingModelFiles { dir: PathBuf, missing: String },
    #[error("the reranker directory {dir} lacks {missing} (it must hold a Hugging Face cross-encoder: model.safetensors, tokenizer.json, config.json)")]
    MissingRerankerFiles { dir: PathBuf, missing: String },
    #[error("cannot read the model config {path}: {reason}")]
    Config { path: PathBuf, reason: String },
    #[error("cannot load the tokenizer {path}: {reason}")]
    Tokenizer { path: PathBuf, reason: String },
    #[error("cannot tokenize the input: {0}")]
    Tokenize(String),
    #[error("cannot load the weights {path}: {reason}")]
    Weights { path: PathBuf, reason: String },
    #[error("no GPU is available to wgpu: {0}")]
    NoGpu(String),
    #[error("the compute backend failed: {0}")]
    Backend(String),
    #[error("the embedding worker has stopped")]
    WorkerGone,
}

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// all-MiniLM-L6-v2, loaded on one device.
pub struct Embedder {
    tokenizer: tokenize::WordPiece,
    model: bert::Bert,
    device: burn::tensor::Device,
    backend: Backend,
    precision: Precision,
}

/// Which of [`MODEL_FILES`] `dir` lacks, comma-separated, or `None` when
/// it has them all.
pub(crate) fn missing_files(dir: &Path) -> Option<String> {
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

impl Embedder {
    /// Loads the model from `dir` onto the device `choice` resolves to, in
    /// f32.
    pub fn load(dir: &Path, choice: DeviceChoice) -> Result<Self, EmbedError> {
        Self::load_with(dir, choice, Precision::Fp32)
    }

    /// Loads the model from `dir` onto the device `choice` resolves to,
    /// its projections at `precision` on the CPU (a GPU runs f32 whatever
    /// is asked; [`Self::precision`] says what runs).
    #[tracing::instrument(skip_all, fields(dir = %dir.display(), ?choice, %precision))]
    pub fn load_with(
        dir: &Path,
        choice: DeviceChoice,
        precision: Precision,
    ) -> Result<Self, EmbedError> {
        if let Some(missing) = missing_files(dir) {
            return Err(EmbedError::MissingModelFiles {
                dir: dir.to_owned(),
                missing,
            });
        }
        let started = Instant::now();
        let (device, backend) = device::resolve(choice)?;
        let config = bert::BertConfig::from_file(&dir.join("config.json"))?;
        let tokenizer = tokenize::WordPiece::from_file(&dir.join("tokenizer.json"), MAX_TOKENS)?;
        let precision = match backend {
            Backend::Cpu => precision,
            Backend::Wgpu { .. } => {
                if precision != Precision::Fp32 {
                    tracing::warn!(%precision, "a GPU runs the model in fp32; --embed-precision applies to the CPU");
                }
                Precision::Fp32
            }
        };
        if !precision.accelerated() {
            tracing::warn!(%precision, "this CPU lacks the instructions that make this precision fast (AVX-512 VNNI for int8, AVX-512 BF16 for bf16): it runs correctly but slower than fp32");
        }
        let model = bert::Bert::load(&config, &dir.join("model.safetensors"), &device, precision)?;
        tracing::info!(
            backend = %backend,
            %precision,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "embedding model loaded"
        );
        Ok(Self {
            tokenizer,
            model,
            device,
            backend,
            precision,
        })
    }

    /// The backend the model runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// What its projections compute in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Texts per forward pass on this backend: [`DEFAULT_BATCH`] on the
    /// CPU, [`GPU_BATCH`] on a GPU.
    pub fn batch(&self) -> usize {
        match self.backend {
            Backend::Cpu => DEFAULT_BATCH,
            Backend::Wgpu { .. } => GPU_BATCH,
        }
    }

    /// Embeds `texts`, in order, with batches of at most [`Self::batch`].
    pub fn embed<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Embedding>, EmbedError> {
        self.embed_with_batch(texts, self.batch())
    }

    /// Embeds `texts`, in order, with batches of at most `batch` texts (see
    /// [`batching`] for how they are formed and spread over the cores).
    pub fn embed_with_batch<S: AsRef<str>>(
        &self,
        texts: &[S],
        batch: usize,
    ) -> Result<Vec<Embedding>, EmbedError> {
        let encoded = self.tokenizer.encode(texts)?;
        let span = tracing::Span::current();
        let run = || {
            span.in_scope(|| {
                batching::run(
                    &encoded,
                    Vec::len,
                    batch,
                    self.backend == Backend::Cpu,
                    |rows| {
                        let rows: Vec<&[u32]> = rows.iter().map(|r| r.as_slice()).collect();
                        self.forward_padded(&rows)
                    },
                )
            })
        };
        match self.backend {
            // On the CPU the passes run on a thread of rayon's pool (the
            // caller's, or the global one for a thread outside every pool,
            // such as the query lane's): a pass's many parallel steps (every
            // projection, the attention) then share out work from inside the
            // pool, rather than each being handed in from outside while the
            // caller sleeps until it ends (docs/benchmarks.md, "The few-token
            // product: 6 × 16 tiles"). The caller's span goes with them.
            Backend::Cpu => rayon::scope(|_| run()),
            // A GPU pass mostly waits on the card: nothing to share out.
            Backend::Wgpu { .. } => run(),
        }
    }

    /// One forward pass over already tokenised rows, padded to the longest.
    ///
    /// A GPU reports a failed pass (an allocation the card or wgpu's buffer
    /// limit refused: a large batch's attention buffer, docs/benchmarks.md,
    /// "The embedder on a GPU") when the result is read. The rows are then run again
    /// in two halves, so a smaller card embeds at a smaller batch instead of
    /// failing the upload; one row that still fails is the error.
    fn forward_padded(&self, rows: &[&[u32]]) -> Result<Vec<Embedding>, EmbedError> {
        match self.forward_once(rows) {
            Err(err) if rows.len() > 1 && self.backend != Backend::Cpu => {
                let (left, right) = rows.split_at(rows.len() / 2);
                tracing::warn!(rows = rows.len(), %err, "GPU pass failed; running it in two halves");
                let mut out = self.forward_padded(left)?;
                out.extend(self.forward_padded(right)?);
                Ok(out)
            }
            result => result,
        }
    }

    fn forward_once(&self, rows: &[&[u32]]) -> Result<Vec<Embedding>, EmbedError> {
        let padded = tokenize::pad(rows);
        let shape = [padded.rows, padded.cols];
        let ids = Tensor::<2, Int>::from_data(TensorData::new(padded.ids, shape), &self.device);
        let plan =
            projection::Plan::for_batch(self.backend == Backend::Cpu, padded.rows * padded.cols);
        let pooled = self.model.embed(ids, padded.lengths, plan);
        let flat = pooled
            .try_into_data()
            .map_err(|e| EmbedError::Backend(e.to_string()))?
            .try_to_vec::<f32>()
            .map_err(|e| EmbedError::Backend(format!("{e:?}")))?;
        Ok(flat.chunks_exact(DIM).map(<[f32]>::to_vec).collect())
    }
}
