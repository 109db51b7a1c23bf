//! What the machine offers, as the defaults that scale with it read it: its
//! memory. A leaf module: the upload budget (`ingest::memory`) and the
//! in-memory segments' budget (`store::resident`) both size themselves
//! from it.

/// The machine's memory in bytes (`MemTotal` of /proc/meminfo), where it
/// can be read.
pub fn memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
