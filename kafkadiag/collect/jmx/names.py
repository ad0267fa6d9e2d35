"""JMX ObjectName strings -> domain and key properties, as javax.management.ObjectName reads them.

Needed where a source gives names as text (Jolokia, JmxDump's key property list). Values may be
quoted (Kafka 0.8.0/0.8.1 quote every part: `"kafka.consumer":type="ConsumerFetcherManager",...`);
a quoted value may contain `,` `=` `:` and the escapes \\" \\\\ \\n \\* \\?.
"""

from __future__ import annotations


def unquote(value: str) -> str:
    """ObjectName.unquote for a quoted value; other values are returned unchanged."""
    if len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return value
    out: list[str] = []
    index = 1
    while index < len(value) - 1:
        char = value[index]
        if char == "\\" and index + 1 < len(value) - 1:
            following = value[index + 1]
            out.append("\n" if following == "n" else following)
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def split_key_properties(text: str) -> list[tuple[str, str]]:
    """'type=X,name="a,b"' -> [("type", "X"), ("name", "a,b")], in order, values unquoted."""
    properties: list[tuple[str, str]] = []
    index = 0
    length = len(text)
    while index < length:
        equals = text.find("=", index)
        if equals < 0:
            break
        key = text[index:equals].strip()
        index = equals + 1
        if index < length and text[index] == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            raw = text[index : end + 1]
            index = end + 1
            comma = text.find(",", index)
            index = length if comma < 0 else comma + 1
        else:
            comma = text.find(",", index)
            raw = text[index:] if comma < 0 else text[index:comma]
            index = length if comma < 0 else comma + 1
        if key == "*" or key == "":
            continue
        properties.append((key, unquote(raw)))
    return properties


def parse_object_name(name: str) -> tuple[str, list[tuple[str, str]]]:
    """'d:k=v,...' -> (unquoted domain, key properties in order)."""
    if name.startswith('"'):
        # A quoted domain (Yammer 2.2 quotes it) may itself contain ':' only inside the quotes.
        end = name.find('":')
        colon = end + 1 if end > 0 else name.find(":")
    else:
        colon = name.find(":")
    if colon < 0:
        return unquote(name), []
    return unquote(name[:colon]), split_key_properties(name[colon + 1 :])
