//! Progress bars on stderr with the amount done, the rate and the time left, for anything that
//! can take more than a second. Only when stderr is a terminal: logs and pipes get no bar and no
//! escape codes.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Whether bars are drawn: stderr is a terminal. A command that must work out a total first
/// asks before doing that work.
pub(crate) fn enabled() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar counting `total` bytes, or `None` when stderr is not a terminal.
pub(crate) fn bytes(total: u64, label: &str) -> Option<ProgressBar> {
    if !enabled() {
        return None;
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(label.to_owned());
    Some(bar)
}

/// Advance a bar, if there is one.
pub(crate) fn advance(bar: &Option<ProgressBar>, bytes: u64) {
    if let Some(bar) = bar {
        bar.inc(bytes);
    }
}

/// Remove a bar from the terminal, if there is one.
pub(crate) fn finish(bar: Option<ProgressBar>) {
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

/// A spinner with the time elapsed, for a single step whose amount is not known in advance (a
/// move, a removal, a compaction), or `None` when stderr is not a terminal.
pub(crate) fn spinner(label: &str) -> Option<ProgressBar> {
    if !enabled() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    let style =
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_message(label.to_owned());
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    Some(bar)
}
