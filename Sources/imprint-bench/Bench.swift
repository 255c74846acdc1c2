import ArgumentParser

@main
struct ImprintBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imprint-bench",
        abstract: "Imprint benchmarks (build with -c release).",
        subcommands: [TraceBenchmark.self, FormatStatsCommand.self, BundleBenchmark.self, MLSBenchmark.self, MLSCryptoBenchmark.self, SyncBenchmark.self, ZoneBenchmark.self, KeyStoreBenchmark.self, SnapshotBenchmark.self]
    )
}
