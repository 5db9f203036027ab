# urllib.parse.urlencode, as the snippet's own code.
#
# It walks the snippet's mapping or sequence of pairs and turns each key and value into text
# with the snippet's own `str()`; only exact `str`/`bytes` copies reach the quoting kernels,
# whose process-wide caches therefore never hold a snippet object.


def text(value):
    # `value` as an exact str or bytes: a subclass is copied through the base type's slot.
    if isinstance(value, bytes):
        return b"".join([value])
    if not isinstance(value, str):
        value = str(value)
    return str.__str__(value)


def quote_one(value, safe, encoding, errors, quote_via):
    value = text(value)
    if quote_via is quote_plus:
        if isinstance(value, bytes):
            return quote_plus(value, safe)
        return quote_plus(value, safe, encoding, errors)
    if isinstance(value, bytes):
        return quote_via(value, safe)
    return quote_via(value, safe, encoding, errors)


def urlencode(query, doseq=False, safe="", encoding=None, errors=None, quote_via=quote_plus):
    """Encode a dict or sequence of two-element tuples into a URL query string.

    If any values in the query arg are sequences and doseq is true, each
    sequence element is converted to a separate parameter.

    If the query arg is a sequence of two-element tuples, the order of the
    parameters in the output will match the order of parameters in the
    input.
    """
    if hasattr(query, "items"):
        query = query.items()
    else:
        try:
            if len(query) and not isinstance(query[0], tuple):
                raise TypeError
        except TypeError as err:
            raise TypeError("not a valid non-string sequence or mapping object") from err
    safe = text(safe)
    out = []
    for k, v in query:
        k = quote_one(k, safe, encoding, errors, quote_via)
        if not doseq or isinstance(v, (str, bytes)):
            out.append(k + "=" + quote_one(v, safe, encoding, errors, quote_via))
            continue
        try:
            len(v)
        except TypeError:
            out.append(k + "=" + quote_one(v, safe, encoding, errors, quote_via))
        else:
            for elt in v:
                out.append(k + "=" + quote_one(elt, safe, encoding, errors, quote_via))
    return "&".join(out)
