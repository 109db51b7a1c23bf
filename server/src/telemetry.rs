//! Logging set-up shared by every command.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the global `tracing` subscriber.
///
/// `RUST_LOG` wins when set; otherwise `-v` raises docshelf's own level.
/// Logs go to stderr so that commands printing data (e.g. JSON) keep stdout
/// clean for pipes.
pub fn init(verbosity: u8) {
    let default = match verbosity {
        0 => "docshelf_server=info,tower_http=warn",
        1 => "docshelf_server=debug,tower_http=info",
        _ => "docshelf_server=trace,tower_http=debug,info",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second call (tests) is harmless: the first subscriber stays.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .try_init();
}
