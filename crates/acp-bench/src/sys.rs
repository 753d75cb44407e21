//! Process measurements: CPU time from `getrusage`, peak RSS from
//! `/proc/self/status`, and percentiles.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};

fn cpu(who: UsageWho) -> Duration {
    match getrusage(who) {
        Ok(usage) => {
            let micros = |t: nix::sys::time::TimeVal| {
                Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
            };
            micros(usage.user_time()) + micros(usage.system_time())
        }
        Err(_) => Duration::ZERO,
    }
}

/// User plus system CPU time of this process (all threads) so far.
pub fn cpu_self() -> Duration {
    cpu(UsageWho::RUSAGE_SELF)
}

/// User plus system CPU time of the children this process has waited for.
pub fn cpu_children() -> Duration {
    cpu(UsageWho::RUSAGE_CHILDREN)
}

/// This process's peak resident set size (`VmHWM`), in KiB; 0 if unknown.
pub fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The line the agent writes to standard error just before it exits.
pub const AGENT_RSS_PREFIX: &str = "acp-bench-agent: peak_rss_kib=";

/// The agent's peak RSS from one of its standard error lines, if it is the
/// [`AGENT_RSS_PREFIX`] line.
pub fn parse_agent_rss(line: &str) -> Option<u64> {
    line.strip_prefix(AGENT_RSS_PREFIX)?.trim().parse().ok()
}

/// The `q`-quantile (0 ≤ q ≤ 1, nearest rank) of `samples`, sorting them.
pub fn quantile(samples: &mut [u64], q: f64) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len());
    Some(samples[rank - 1])
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Pins this process (and the children it starts after this) to one CPU.
pub fn pin_to_cpu(cpu: usize) -> nix::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu)?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_medians() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(quantile(&mut v, 0.5), Some(50));
        assert_eq!(quantile(&mut v, 0.99), Some(99));
        assert_eq!(quantile(&mut v, 1.0), Some(100));
        assert_eq!(quantile(&mut [], 0.5), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn reads_own_peak_rss() {
        assert!(peak_rss_kib() > 0);
        let _ = cpu_self();
    }
}
