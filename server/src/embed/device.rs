//! Which compute backend runs the model.
//!
//! burn 0.22 picks the backend at run time from the tensor's device, so one
//! code path serves both: wgpu for GPUs, burn's `flex` CPU backend otherwise
//! (measured fastest of burn's CPU backends on this project's machines).

use std::fmt;
use std::sync::OnceLock;

use burn::tensor::{Device, DeviceKind};

use super::EmbedError;

/// What the user asked for (`--device`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceChoice {
    /// A hardware GPU through wgpu when one exists, else the CPU.
    #[default]
    Auto,
    /// wgpu on the best adapter it finds (a software one included); an error if none.
    Gpu,
    /// burn's CPU backend.
    Cpu,
}

/// What actually runs the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// wgpu on the named adapter.
    Wgpu { adapter: String, software: bool },
    /// burn's `flex` CPU backend.
    Cpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Wgpu {
                adapter,
                software: false,
            } => write!(f, "wgpu ({adapter})"),
            Backend::Wgpu {
                adapter,
                software: true,
            } => write!(f, "wgpu ({adapter}, software)"),
            Backend::Cpu => f.write_str("cpu (burn flex)"),
        }
    }
}

/// The wgpu adapter, initialised once per process: a wgpu runtime cannot be
/// initialised twice, and adapter discovery is slow.
fn wgpu_adapter() -> &'static Result<(Device, Backend), String> {
    static WGPU: OnceLock<Result<(Device, Backend), String>> = OnceLock::new();
    WGPU.get_or_init(|| {
        // Adapter discovery panics inside some drivers instead of failing;
        // a broken GPU stack must not take the process down with it.
        let init = std::panic::catch_unwind(|| {
            Device::wgpu_options()
                .device_kind(DeviceKind::DefaultDevice)
                .init()
        });
        let device = match init {
            Ok(Ok(device)) => device,
            Ok(Err(err)) => return Err(err.to_string()),
            Err(_) => return Err("the wgpu runtime panicked while looking for an adapter".into()),
        };
        let identity = device.identity();
        let adapter = identity
            .as_ref()
            .map_or_else(|| "unknown adapter".to_owned(), |id| id.name.clone());
        // No physical card behind it: a CPU or a software rasteriser (lavapipe).
        let software = identity.is_none_or(|id| id.physical.is_none());
        Ok((device, Backend::Wgpu { adapter, software }))
    })
}

/// Keeps the GPU probe from printing "error: XDG_RUNTIME_DIR is invalid or
/// not set" on every start of a machine without a desktop
/// session. Those lines come from Mesa's Vulkan device-selection layer,
/// which asks the Wayland compositor which GPU drives the display, through
/// a libwayland that prints when there is none: nothing failed, and
/// docshelf draws on no display. The layer is turned off (its documented
/// switch, `NODEVICE_SELECT=1`) only where it has nothing to select for:
/// no Wayland session, and no `MESA_VK_DEVICE_SELECT` or `DRI_PRIME` from
/// a user choosing a GPU through it. Call it first thing in `main`, before
/// any thread exists, as writing the environment requires.
pub fn quiet_gpu_probe() {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let session = set("WAYLAND_DISPLAY") || set("XDG_RUNTIME_DIR");
    let choosing = set("MESA_VK_DEVICE_SELECT") || set("DRI_PRIME") || set("NODEVICE_SELECT");
    if cfg!(target_os = "linux") && !session && !choosing {
        std::env::set_var("NODEVICE_SELECT", "1");
    }
}

/// Resolves a choice to a device, logging what was picked and why.
pub fn resolve(choice: DeviceChoice) -> Result<(Device, Backend), EmbedError> {
    match choice {
        DeviceChoice::Cpu => Ok((Device::flex(), Backend::Cpu)),
        DeviceChoice::Gpu => match wgpu_adapter() {
            Ok((device, backend)) => Ok((device.clone(), backend.clone())),
            Err(reason) => Err(EmbedError::NoGpu(reason.clone())),
        },
        DeviceChoice::Auto => match wgpu_adapter() {
            Ok((
                device,
                backend @ Backend::Wgpu {
                    software: false, ..
                },
            )) => Ok((device.clone(), backend.clone())),
            Ok((_, Backend::Wgpu { adapter, .. })) => {
                tracing::info!(
                    %adapter,
                    "only a software GPU adapter was found; embedding on the CPU backend, which is faster"
                );
                Ok((Device::flex(), Backend::Cpu))
            }
            Ok((_, Backend::Cpu)) => Ok((Device::flex(), Backend::Cpu)),
            Err(reason) => {
                tracing::info!(%reason, "no GPU found; embedding on the CPU backend");
                Ok((Device::flex(), Backend::Cpu))
            }
        },
    }
}
