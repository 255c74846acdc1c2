// `Storage.config` holds the JSON value type every Imprint module shares; it lives in the
// ImprintEncoding leaf and is re-exported so `import ImprintDelivery` is enough to use it.
@_exported import enum ImprintEncoding.JSONValue
