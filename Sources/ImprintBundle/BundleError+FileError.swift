import ImprintFiles

extension BundleError {
    /// The same failure as a `BundleError` of the same kind (io, notFound, tooLarge,
    /// lockTimeout), message, path and errno, for callers that handle bundle errors only.
    public init(_ error: FileError) {
        let code: Code = switch error {
        case .notFound: .notFound
        case .tooLarge: .tooLarge
        case .lockTimeout: .lockTimeout
        case .wrongType: .corrupt
        default: .io
        }
        self.init(code, error.message, path: error.path, errno: error.errno)
    }
}

extension BundleError {
    /// Runs `body`, reporting a `FileError` as the `BundleError` of the same kind: for the
    /// readers whose callers have always seen only `BundleError`s (metadata, snapshots).
    static func convertingFileErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FileError {
            throw BundleError(error)
        }
    }
}
