//! A read cache, in memory, for the files Lance never rewrites.
//!
//! Lance keeps its indexes and table metadata in its own in-memory caches,
//! but the rows a search returns are read from the data files every time.
//! On the S3 test server a warm hybrid search made several range GETs, all
//! to data files, and took half as long again as on a local directory
//! (`make bench-replicas`; docs/benchmarks.md, "Object storage and
//! replicas"). Those files (and
//! index and deletion files) are immutable: Lance writes each once under a
//! fresh name and never changes it, so what was read once can be served
//! from memory for as long as it is kept, with no check for staleness.
//!
//! Reads are cached in aligned blocks, so a later read of a nearby range
//! (another row of the same page) is a hit too. A miss fetches the span of
//! the missing blocks in one request. Everything else (listings, which
//! must see new table versions, manifests, conditional reads, writes) goes
//! straight to the store.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload,
    PutResult, RenameOptions,
};

/// The cache's block: a read is widened to whole blocks. Lance reads pages
/// of a few KiB to a few hundred KiB; one request for 256 KiB costs about
/// what one for 4 KiB costs on an object store.
const BLOCK: u64 = 256 * 1024;

/// Object paths holding only files written once: a dataset's data,
/// index and deletion files.
fn immutable(location: &Path) -> bool {
    let path = location.as_ref();
    [".lance/data/", ".lance/_indices/", ".lance/_deletions/"]
        .iter()
        .any(|dir| path.contains(dir))
}

/// An object store with a block cache of its immutable files in front.
pub struct BlockCache {
    inner: Arc<dyn ObjectStore>,
    blocks: moka::sync::Cache<(Path, u64), Bytes>,
    meta: moka::sync::Cache<Path, ObjectMeta>,
}

impl BlockCache {
    /// Caches up to `capacity` bytes of `inner`'s immutable files.
    pub fn new(inner: Arc<dyn ObjectStore>, capacity: u64) -> Self {
        Self {
            inner,
            blocks: moka::sync::Cache::builder()
                .weigher(|_, block: &Bytes| u32::try_from(block.len()).unwrap_or(u32::MAX))
                .max_capacity(capacity)
                .build(),
            meta: moka::sync::Cache::new(100_000),
        }
    }

    /// The object's metadata: its size bounds the blocks. Asked of the
    /// store once per file (the file never changes).
    async fn meta(&self, location: &Path) -> object_store::Result<ObjectMeta> {
        if let Some(meta) = self.meta.get(location) {
            return Ok(meta);
        }
        let meta = self.inner.head(location).await?;
        self.meta.insert(location.clone(), meta.clone());
        Ok(meta)
    }

    /// The bytes of `range` (its end clamped to the object's size) with the
    /// object's metadata, or `None` for a range the store must answer
    /// itself (one starting at or past the end: the store's error says so).
    async fn read(
        &self,
        location: &Path,
        range: Range<u64>,
    ) -> object_store::Result<Option<(Bytes, ObjectMeta, Range<u64>)>> {
        let meta = self.meta(location).await?;
        let end = range.end.min(meta.size);
        if range.start >= end {
            return Ok(None);
        }
        let (first, last) = (range.start / BLOCK, (end - 1) / BLOCK);
        let mut blocks: Vec<Option<Bytes>> = (first..=last)
            .map(|b| self.blocks.get(&(location.clone(), b)))
            .collect();
        let missing: Vec<u64> = (first..=last)
            .zip(&blocks)
            .filter(|(_, block)| block.is_none())
            .map(|(b, _)| b)
            .collect();
        if let (Some(&from), Some(&to)) = (missing.first(), missing.last()) {
            let span = from * BLOCK..((to + 1) * BLOCK).min(meta.size);
            let bytes = self
                .inner
                .get_opts(
                    location,
                    GetOptions {
                        range: Some(GetRange::Bounded(span.clone())),
                        ..GetOptions::default()
                    },
                )
                .await?
                .bytes()
                .await?;
            if bytes.len() as u64 != span.end - span.start {
                // The object is not what its metadata said: never cache it.
                return Ok(None);
            }
            for b in from..=to {
                let at = ((b - from) * BLOCK) as usize;
                let block = bytes.slice(at..bytes.len().min(at + BLOCK as usize));
                self.blocks.insert((location.clone(), b), block.clone());
                blocks[(b - first) as usize] = Some(block);
            }
        }
        let mut out = BytesMut::with_capacity((end - range.start) as usize);
        for (b, block) in (first..).zip(blocks) {
            let Some(block) = block else {
                return Ok(None);
            };
            let block_start = b * BLOCK;
            let from = range.start.max(block_start) - block_start;
            let to = end.min(block_start + block.len() as u64) - block_start;
            out.extend_from_slice(&block[from as usize..to as usize]);
        }
        Ok(Some((out.freeze(), meta, range.start..end)))
    }
}

impl fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCache")
            .field("inner", &self.inner)
            .field("cached_bytes", &self.blocks.weighted_size())
            .finish()
    }
}

impl fmt::Display for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlockCache({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for BlockCache {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let plain = options.if_match.is_none()
            && options.if_none_match.is_none()
            && options.if_modified_since.is_none()
            && options.if_unmodified_since.is_none()
            && options.version.is_none()
            && !options.head;
        let range = match &options.range {
            _ if !plain || !immutable(location) => None,
            None => Some(0..u64::MAX),
            Some(GetRange::Bounded(range)) => Some(range.clone()),
            Some(GetRange::Offset(start)) => Some(*start..u64::MAX),
            Some(GetRange::Suffix(_)) => None,
        };
        if let Some(range) = range {
            if let Some((bytes, meta, range)) = self.read(location, range).await? {
                return Ok(GetResult {
                    payload: GetResultPayload::Stream(
                        futures::stream::once(async move { Ok(bytes) }).boxed(),
                    ),
                    meta,
                    range,
                    attributes: Default::default(),
                    extensions: Default::default(),
                });
            }
        }
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    /// Reads through the cache match the file, ranges across blocks and
    /// past the end included, and a read of cached blocks needs the store
    /// no more (the file is deleted underneath, and still served).
    #[tokio::test]
    async fn reads_match_the_file_and_cached_blocks_need_no_store() {
        let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let path = Path::from("t/chunks.lance/data/abc.lance");
        let size = (2 * BLOCK + 1234) as usize;
        let data: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
        inner
            .put(&path, PutPayload::from(data.clone()))
            .await
            .expect("put");
        let cache = BlockCache::new(inner.clone(), 64 << 20);
        let ranges = [
            0..10,
            BLOCK - 5..BLOCK + 5,
            3..(2 * BLOCK + 1234),
            2 * BLOCK..2 * BLOCK + 9_999,
            100..BLOCK * 2,
        ];
        for range in ranges.clone() {
            let got = cache.get_range(&path, range.clone()).await.expect("range");
            let end = (range.end as usize).min(size);
            assert_eq!(&got[..], &data[range.start as usize..end], "{range:?}");
        }
        let whole = cache
            .get(&path)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        assert_eq!(&whole[..], &data[..]);
        assert_eq!(
            cache.head(&path).await.expect("head").size,
            size as u64,
            "head goes to the store"
        );

        inner.delete(&path).await.expect("delete");
        for range in ranges {
            let got = cache.get_range(&path, range.clone()).await.expect("cached");
            let end = (range.end as usize).min(size);
            assert_eq!(&got[..], &data[range.start as usize..end], "{range:?}");
        }
    }

    /// Files that can change (manifests, anything outside a dataset's
    /// data, index and deletion directories) are always read from the store.
    #[tokio::test]
    async fn other_files_are_never_cached() {
        let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let path = Path::from("t/chunks.lance/_versions/1.manifest");
        inner
            .put(&path, PutPayload::from(vec![1u8; 100]))
            .await
            .expect("put");
        let cache = BlockCache::new(inner.clone(), 64 << 20);
        assert_eq!(cache.get_range(&path, 0..10).await.expect("read").len(), 10);
        inner
            .put(&path, PutPayload::from(vec![2u8; 100]))
            .await
            .expect("put");
        assert_eq!(cache.get_range(&path, 0..1).await.expect("read")[0], 2);
    }
}
