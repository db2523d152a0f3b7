//! Command-line front end. Errors print as one line on stderr and exit with status 1 (2 for
//! usage errors, from clap); a panic (101) is always a bug.

mod bench;
mod cat;
mod check;
mod compact;
mod demo;
mod info;
mod locator;
mod render;
mod transfer;
mod tree;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// zarrdb: an embedded, transactional Zarr v3 storage engine.
#[derive(Parser)]
#[command(name = "zarrdb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the hierarchy: names, shapes, data types, chunk shapes, codecs, implicit groups.
    Tree {
        /// Store locator: a database file, an LMDB or sled folder, a directory; or `redb:`, `lmdb:`, `sled:`, `dir:` + PATH.
        store: String,
    },
    /// Show a node's metadata and storage figures.
    Info {
        /// Store locator.
        store: String,
        /// Node path inside the store (default: the root).
        #[arg(default_value = "/")]
        node: String,
        /// Print one JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print an array's values.
    Cat {
        /// Store locator.
        store: String,
        /// Array path inside the store.
        array: String,
        /// Region, one entry per dimension: `start:stop`, `:`, or an index; e.g. "0:10,5,:".
        #[arg(long, allow_hyphen_values = true)]
        region: Option<String>,
        /// Print nested JSON lists.
        #[arg(long, conflicts_with = "raw")]
        json: bool,
        /// Write the C-order little-endian element bytes to stdout.
        #[arg(long)]
        raw: bool,
    },
    /// Decode every chunk of every array and verify checksums; non-zero exit on any problem.
    Check {
        /// Store locator.
        store: String,
    },
    /// Give the space of erased and overwritten data back to the file system: the live data moves
    /// to the front of the file, which is then cut. Each step is a commit, so an interrupted
    /// compaction leaves the database intact. redb only (LMDB and sled: refused).
    Compact {
        /// Database locator: a redb file, or `redb:` + PATH.
        database: String,
        /// Print one JSON document: database, backend, bytes_before, bytes_after.
        #[arg(long)]
        json: bool,
    },
    /// Run the benchmark workloads of BENCHMARKS.md and print the figures.
    Bench {
        /// Workload (repeatable): big_zstd, big_raw, small_chunks, sharded, sharded_partial, list_children,
        /// append_rows, concurrent_unaligned, group_commit, import_export, compact.
        /// Default: the four whole-array ones.
        #[arg(long = "workload")]
        workloads: Vec<String>,
        /// Backend (repeatable): redb, lmdb, sled, directory, memory. Default: redb, lmdb, sled, directory.
        #[arg(long = "backend")]
        backends: Vec<String>,
        /// Runs per figure; the median is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Print one JSON array of figures.
        #[arg(long)]
        json: bool,
        /// Where stores are created (default: the system temporary directory).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// Commits on the databases: `durable` (fsync at every commit, the default) or `fast`.
        /// The directory store never fsyncs.
        #[arg(long, default_value = "durable", value_parser = ["durable", "fast"])]
        durability: String,
    },
    /// Import a Zarr hierarchy (v3, v2, a v1 array or the 2020 draft layout) from a folder or a
    /// zip archive into a database, in one transaction. v2/v1/draft metadata becomes v3; chunk
    /// bytes are copied as they are.
    Import {
        /// The folder or `.zip` file to read.
        source: String,
        /// Database locator (created when missing): a redb file, or `lmdb:`, `sled:`, `redb:` + PATH.
        database: String,
        /// Where the source's root lands in the database.
        #[arg(long, default_value = "/")]
        at: String,
        /// Leave out the nodes matching this node-path pattern and their subtrees (repeatable):
        /// `/grid` excludes grid and everything below; `*` and `?` match within one segment.
        #[arg(long = "exclude", value_name = "PATTERN")]
        exclude: Vec<String>,
        /// Skip nodes whose metadata cannot be imported (unknown codec, invalid or unconvertible
        /// metadata) with their subtrees, and import the rest; each is printed. Default: fail.
        #[arg(long)]
        skip_unreadable: bool,
    },
    /// Export a node of a database, from one snapshot, to a new folder or a new `.zip` archive.
    /// Chunk bytes are copied as they are.
    Export {
        /// Database locator.
        database: String,
        /// The folder or `.zip` file to create; it must not exist.
        destination: String,
        /// The node to export; it becomes the root of the result.
        #[arg(long, default_value = "/")]
        node: String,
        /// Do not write consolidated metadata into the exported root group's zarr.json.
        #[arg(long)]
        no_consolidated: bool,
    },
    /// Build a small real dataset with transactions, read it back and show its tree.
    Demo {
        /// Where to build it: a store locator naming nothing yet or an empty folder (default: a
        /// temporary redb file, removed afterwards).
        locator: Option<String>,
    },
}

/// An error the CLI reports: one line, exit status 1.
pub(crate) struct CliError(String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(err: E) -> Self {
        CliError(err.to_string())
    }
}

pub(crate) type CliResult = Result<(), CliError>;

pub(crate) fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tree { store } => tree::run(&store),
        Command::Info { store, node, json } => info::run(&store, &node, json),
        Command::Cat { store, array, region, json, raw } => cat::run(&store, &array, region.as_deref(), json, raw),
        Command::Check { store } => check::run(&store),
        Command::Compact { database, json } => compact::run(&database, json),
        Command::Bench { workloads, backends, runs, json, dir, durability } => {
            bench::run(bench::Options { workloads, backends, runs, json, dir, durable: durability == "durable" })
        }
        Command::Demo { locator } => demo::run(locator),
        Command::Import { source, database, at, exclude, skip_unreadable } => {
            transfer::import(&source, &database, &at, exclude, skip_unreadable)
        }
        Command::Export { database, destination, node, no_consolidated } => {
            transfer::export(&database, &destination, &node, !no_consolidated)
        }
    };
    bench::report_peak_rss();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError(message)) => {
            // One line, whatever the message holds.
            eprintln!("zarrdb: error: {}", message.replace(['\n', '\r'], " "));
            ExitCode::FAILURE
        }
    }
}
