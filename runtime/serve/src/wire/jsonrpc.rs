//! A message on the wire, before rmcp reads it: what `POST /mcp` and each stdio line pass only
//! when well-formed. rmcp answers malformed ones with `415` and a text body, or not at all on
//! stdio; the contract is a JSON-RPC error: `-32700` for what does not parse,
//! `-32600` for what is not a valid request, and `-32602` (under the request's own id) for a
//! `tools/call` whose params are not `{name, arguments?: object}`, which rmcp reports as an
//! unknown method.

use serde_json::{json, Value};

/// Why a message is refused: (JSON-RPC code, message, the id to answer with). Over HTTP, a
/// `-32602` is answered `200` under the request's id; the others `400`.
pub(crate) type Refused = (i32, String, Value);

/// What the layers inside need to know of a well-formed message, left on the request so none
/// parses the body again.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // stdio only asks whether a line is well-formed
pub(crate) struct RpcMethod {
    /// The method (`None`: a response).
    pub(crate) method: Option<String>,
    /// rmcp reads the message as a request: a method and an id (`inspect` refuses a method
    /// beside `result`/`error`).
    pub(crate) request: bool,
    /// The request's id (`null` for a notification or a response).
    pub(crate) id: Value,
    /// The tool a `tools/call` request names.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(crate) tool: Option<String>,
}

/// Check one message; its method when it is well-formed (stdio, which only asks whether a line is).
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) fn inspect(bytes: &[u8]) -> Result<RpcMethod, Refused> {
    read(bytes).map(|(rpc, _)| rpc)
}

/// [`inspect`], and the message as read: the one parse of it that what comes after reads from.
pub(crate) fn read(bytes: &[u8]) -> Result<(RpcMethod, Value), Refused> {
    let invalid = |message: &str| Err((-32600, message.to_owned(), Value::Null));
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err((-32700, "Parse error: the body is not UTF-8".into(), Value::Null));
    };
    if text.trim().is_empty() {
        return Err((-32700, "Parse error: the body is empty".into(), Value::Null));
    }
    let repeated = std::cell::RefCell::new(None);
    let message: Value = match parse(text, &repeated) {
        Ok(message) => message,
        // serde_json's own limit (128 levels) makes too-deep nesting a parse error too.
        Err(e) => return Err((-32700, format!("Parse error: {e}"), Value::Null)),
    };
    // Which of the two would count is anyone's guess (rmcp refuses some, keeps the last of others).
    if let Some(key) = repeated.into_inner() {
        let key: String = key.chars().take(64).collect();
        return invalid(&format!("Invalid Request: an object repeats the key {key:?}; send each key once"));
    }
    let object = match &message {
        Value::Object(object) => object,
        Value::Array(_) => {
            return invalid("Invalid Request: JSON-RPC batches are not supported; send one message per request")
        }
        _ => return invalid("Invalid Request: a JSON-RPC message is an object"),
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    let id = match object.get("id") {
        None => Value::Null,
        Some(id @ Value::String(_)) => id.clone(),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => id.clone(),
        Some(_) => return invalid("Invalid Request: `id` must be a string or an integer"),
    };
    let is_response = object.contains_key("result") || object.contains_key("error");
    let method =
        match object.get("method") {
            Some(_) if is_response => return invalid(
                "Invalid Request: a message carries `method` (a request) or `result`/`error` (a response), not both",
            ),
            Some(Value::String(method)) => method.as_str(),
            // A response's id is the server's request's: never the id to answer under.
            None if is_response => {
                return Ok((RpcMethod { method: None, request: false, id: Value::Null, tool: None }, message))
            }
            _ => return invalid("Invalid Request: `method` must be a string"),
        };
    let mut tool = None;
    if method == "tools/call" && !id.is_null() {
        let params = object.get("params");
        tool = params.and_then(|p| p.get("name")).and_then(Value::as_str).map(str::to_owned);
        let name_ok = tool.is_some();
        let arguments_ok = params.and_then(|p| p.get("arguments")).is_none_or(|a| a.is_object() || a.is_null());
        if !params.is_some_and(Value::is_object) || !name_ok || !arguments_ok {
            let message = "Invalid params: tools/call takes {\"name\": string, \"arguments\"?: object}";
            return Err((-32602, message.into(), id));
        }
    }
    let request = object.contains_key("id");
    let method = Some(method.to_owned());
    Ok((RpcMethod { method, request, id, tool }, message))
}

/// `text` as a `Value`, as `serde_json::from_str` reads it, noting in `repeated` the first key an
/// object repeats (`serde_json` would keep its last value silently).
fn parse(text: &str, repeated: &std::cell::RefCell<Option<String>>) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Noting(repeated).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Builds a `Value` as serde_json's own visitor does, noting a repeated key.
struct Noting<'a>(&'a std::cell::RefCell<Option<String>>);

impl<'de> serde::de::DeserializeSeed<'de> for Noting<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Noting<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }
    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }
    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }
    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element_seed(Noting(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // serde_json with `arbitrary_precision` (another crate may turn it on) hands numbers
            // over as this one-entry map.
            if object.is_empty() && key == "$serde_json::private::Number" {
                let digits: String = map.next_value()?;
                return serde_json::from_str(&digits).map(Value::Number).map_err(serde::de::Error::custom);
            }
            let value = map.next_value_seed(Noting(self.0))?;
            if let Some(key) = object.insert(key.clone(), value).map(|_| key) {
                self.0.borrow_mut().get_or_insert(key);
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &[u8]) -> Option<i32> {
        inspect(body).err().map(|(code, _, _)| code)
    }

    #[test]
    fn a_message_reads_as_serde_json_reads_it_and_a_repeated_key_is_refused() {
        let plain = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"n":-1,"f":1.5,"u":18446744073709551615,"l":[true,null,"s"]}}}"#;
        let (_, value) = read(plain.as_bytes()).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(plain).unwrap());
        for (repeated, key) in [
            (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}"#, "id"),
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#, "name"),
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"k":1,"k":2}}}"#, "k"),
        ] {
            let (code, message, _) = read(repeated.as_bytes()).unwrap_err();
            assert_eq!(code, -32600, "{repeated}");
            assert!(message.contains(&format!("repeats the key \"{key}\"")), "{message}");
        }
    }

    #[test]
    fn malformed_messages_get_the_contracts_codes() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for (body, expected) in [
            (&b"\xff\xfe"[..], -32700),
            (b"", -32700),
            (b"  ", -32700),
            (b"{\"jsonrpc\":", -32700),
            (deep.as_bytes(), -32700),
            (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
            (b"42", -32600),
            (br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"method":7}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#, -32602),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#, -32602),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#, -32602),
            // rmcp answers these 415 in plain text; the contract is a JSON-RPC error.
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping","error":{"code":1,"message":"x"}}"#, -32600),
        ] {
            assert_eq!(code(body), Some(expected), "{}", String::from_utf8_lossy(body));
        }
        for ok in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        ] {
            assert_eq!(code(ok), None, "{}", String::from_utf8_lossy(ok));
        }
        let method = |body: &[u8]| inspect(body).map(|m| (m.method, m.request)).unwrap();
        let initialize = method(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#);
        assert_eq!(initialize, (Some("initialize".to_owned()), true));
        assert_eq!(method(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#), (None, false));
        // What rmcp does not read as a request: a notification.
        let initialized = method(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(initialized, (Some("notifications/initialized".to_owned()), false));
    }
}
