import Testing

/// The parent of every co-editing suite, run one test at a time: each starts a server and
/// several clients (some as child processes), and together in parallel they would starve the
/// rest of the test run on a 2-core machine.
@Suite(.serialized) enum SyncSuites {}
