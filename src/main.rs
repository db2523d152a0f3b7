//! The `zarrdb` command line: see `zarrdb --help` and DESIGN.md §11.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
