//! `s3://bucket/prefix` for Lance: object_store's S3 client, configured
//! from docshelf's flags over the usual AWS variables, behind Lance's
//! provider interface.

use std::collections::HashMap;
use std::sync::Arc;

use lance_io::object_store::{
    ObjectStore as LanceStore, ObjectStoreParams, ObjectStoreProvider, StorageOptions,
    DEFAULT_CLOUD_IO_PARALLELISM,
};
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey, S3ConditionalPut};
use url::Url;

use super::cache::BlockCache;
use super::http::ReqwestConnector;
use super::S3Config;

/// Builds the S3 client for the bucket `url` names.
///
/// Settings, later ones winning: the `AWS_*` environment, LanceDB's
/// storage options (none today), then docshelf's flags. Conditional puts
/// (`If-None-Match`, `If-Match`) are always on: Lance commits a table
/// version by creating its manifest only if it does not exist, and the
/// writers' lease (`store::lease`) swaps on ETags. AWS S3, MinIO, R2 and
/// Ceph RGW all honour them.
pub fn client(
    url: &Url,
    config: &S3Config,
    options: &HashMap<String, String>,
) -> object_store::Result<AmazonS3> {
    let bucket = url.host_str().unwrap_or_default();
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_http_connector(ReqwestConnector);
    for (key, value) in options {
        if let Ok(key) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
            builder = builder.with_config(key, value);
        }
    }
    if let Some(endpoint) = &config.endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    let plain_http = builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_some_and(|endpoint| endpoint.starts_with("http://"));
    if plain_http {
        builder = builder.with_allow_http(true);
    }
    if let Some(region) = &config.region {
        builder = builder.with_region(region);
    }
    if let Some(key) = &config.access_key_id {
        builder = builder.with_access_key_id(key);
    }
    if let Some(secret) = &config.secret_access_key {
        builder = builder.with_secret_access_key(secret);
    }
    builder
        .with_conditional_put(S3ConditionalPut::ETagMatch)
        .build()
}

/// Whether the endpoint is Cloudflare R2, whose multipart uploads need
/// parts of one size.
fn is_r2(config: &S3Config) -> bool {
    let endpoint = config
        .endpoint
        .clone()
        .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
        .unwrap_or_default();
    endpoint.contains(".r2.cloudflarestorage.com")
}

/// Lance's provider for the `s3` scheme.
#[derive(Debug)]
pub struct S3Provider {
    pub config: S3Config,
}

#[async_trait::async_trait]
impl ObjectStoreProvider for S3Provider {
    async fn new_store(
        &self,
        base: Url,
        params: &ObjectStoreParams,
    ) -> lance_core::Result<LanceStore> {
        let options = params.storage_options().cloned().unwrap_or_default();
        let s3 = client(&base, &self.config, &options)?;
        let retries = StorageOptions::new(options.clone()).download_retry_count();
        let cached = BlockCache::new(Arc::new(s3), self.config.cache_mib.saturating_mul(1 << 20));
        Ok(LanceStore::new(
            Arc::new(cached),
            base,
            params.block_size,
            params.object_store_wrapper.clone(),
            params.use_constant_size_upload_parts || is_r2(&self.config),
            // S3 lists keys in lexical order; Lance finds the latest table
            // version by that.
            true,
            DEFAULT_CLOUD_IO_PARALLELISM,
            retries,
            Some(&options),
        ))
    }
}
