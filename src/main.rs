//! The `zarrdb` command line: see `zarrdb --help` and docs/cli.md. Built with the `cli` feature
//! (on by default), which brings its argument parser, progress bars and allocator.

mod cli;

/// Chunk buffers of a megabyte come and go by the thousand. The system allocator returns each to
/// the kernel and maps fresh pages for the next, which the kernel zeroes on every page fault;
/// mimalloc keeps them for reuse.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::run()
}
