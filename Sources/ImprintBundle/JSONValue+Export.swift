// `BundleMetadata.extra` holds the JSON value type every Imprint module shares; it lives in
// the ImprintEncoding leaf and is re-exported so `import ImprintBundle` is enough to use it.
@_exported import enum ImprintEncoding.JSONValue
