//! The CLI against a running server (`--server URL`): the same requests a
//! client of the REST API sends, with the token as a bearer header, so a
//! remote command passes the server's one access check like any face.

use index_core::ErrorBody;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Where a command runs: on a server when one is named, else on the store.
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// A running docshelf server to send the command to (`http://host:8080`),
    /// instead of opening the store here.
    #[arg(long = "server", env = "DOCSHELF_SERVER")]
    pub server: Option<url::Url>,

    /// The token sent to `--server` (Authorization: Bearer).
    #[arg(long = "token", env = "DOCSHELF_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// A refusal the server answered, kept typed so the exit status follows
/// its kind as for a local command.
#[derive(Debug, thiserror::Error)]
#[error("{} ({})", .0.error, .0.code.name())]
pub struct Refused(pub ErrorBody);

/// A path segment or query value, percent-encoded: everything but
/// letters and digits, so a `/` in a name stays in its segment and a space
/// is `%20` (form encoding's `+` would be a literal plus in a path).
pub fn encode(part: &str) -> String {
    percent_encoding::utf8_percent_encode(part, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A server and the token to send it.
pub struct Remote {
    base: url::Url,
    token: Option<String>,
    client: reqwest::Client,
}

impl Remote {
    /// The server `args` name, if they name one.
    pub fn named(args: &RemoteArgs) -> anyhow::Result<Option<Self>> {
        args.server
            .clone()
            .map(|server| Self::new(server, args.token.clone()))
            .transpose()
    }

    pub fn new(server: url::Url, token: Option<String>) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()?;
        Ok(Self {
            base: server,
            token: token.filter(|t| !t.trim().is_empty()),
            client,
        })
    }

    fn url(&self, path: &str) -> anyhow::Result<url::Url> {
        Ok(self.base.join(path)?)
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> anyhow::Result<T> {
        Ok(serde_json::from_slice(&self.send_raw(request).await?)?)
    }

    /// The body of a successful answer as it came; a refusal as the
    /// server's error.
    async fn send_raw(&self, request: reqwest::RequestBuilder) -> anyhow::Result<bytes::Bytes> {
        let request = match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let response = request
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("cannot reach the server at {}: {e}", self.base))?;
        let status = response.status();
        let bytes = response.bytes().await?;
        if status.is_success() {
            return Ok(bytes);
        }
        match serde_json::from_slice::<ErrorBody>(&bytes) {
            Ok(body) => Err(Refused(body).into()),
            Err(_) => anyhow::bail!(
                "the server answered {status}: {}",
                String::from_utf8_lossy(&bytes)
                    .chars()
                    .take(300)
                    .collect::<String>()
            ),
        }
    }

    /// A GET's body as bytes (an export file).
    pub async fn get_bytes(&self, path: &str) -> anyhow::Result<bytes::Bytes> {
        self.send_raw(self.client.get(self.url(path)?)).await
    }

    /// POSTs `body` as bytes (an export file) and reads a JSON answer.
    pub async fn post_bytes<T: DeserializeOwned>(
        &self,
        path: &str,
        body: Vec<u8>,
    ) -> anyhow::Result<T> {
        let request = self
            .client
            .post(self.url(path)?)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(body);
        self.send(request).await
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        self.send(self.client.get(self.url(path)?)).await
    }

    pub async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> anyhow::Result<T> {
        self.send(self.client.post(self.url(path)?).json(body))
            .await
    }

    pub async fn delete<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        self.send(self.client.delete(self.url(path)?)).await
    }
}
