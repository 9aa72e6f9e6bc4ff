"""One module per API, named by key; APIS maps key -> Api."""
from .m11_join_group import JOIN_GROUP

APIS = {api.key: api for api in (
    JOIN_GROUP,
)}
