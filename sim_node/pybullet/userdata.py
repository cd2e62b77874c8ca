"""User data: key/value strings attached to bodies, links and visual shapes (PyBullet's
addUserData, getUserData, getUserDataId, getNumUserData, getUserDataInfo, removeUserData,
syncUserData).

As PyBullet 3.2.7: keys and values are str (stored as UTF-8, read back as bytes; no NUL, they
are C strings there); adding a key that a (body, link, visual shape) already has replaces its
value and keeps its id; ids are per physics client, a removed id is the next one given (Bullet's
handle pool: last freed, first reused); getUserDataInfo's order is the body's entries in the
order added, a removed entry's place taken by the body's last (Bullet's array remove);
saveState / restoreState leave user data alone, removeBody drops its body's, resetSimulation
all. Unknown ids read as None (getUserData) or -1 (getUserDataId), as PyBullet's. Unlike
PyBullet, a link index the body does not have is refused (PyBullet stores it), and so is a
getUserDataInfo index out of range (PyBullet reads past its table).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sim_node.pybullet.client import _as_index, get_client
from sim_node.pybullet.errors import error

__all__ = ["addUserData", "getUserData", "getUserDataId", "getNumUserData", "getUserDataInfo",
           "removeUserData", "syncUserData"]

# bounds on what a script may store: a key or value beyond this is refused, not kept
MAX_TEXT_BYTES = 1 << 20
MAX_ENTRIES = 100_000


@dataclass
class UserData:
    body: int
    link: int
    visual: int
    key: bytes
    value: bytes


@dataclass
class UserDataTable:
    """A physics client's user data (client.user_data)."""
    entries: dict = field(default_factory=dict)      # userDataId -> UserData
    order: dict = field(default_factory=dict)        # body uid -> [userDataId] (info order)
    free: list = field(default_factory=list)         # removed ids, the last freed on top
    next_id: int = 0

    def add(self, data: UserData) -> int:
        if self.free:
            uid = self.free.pop()
        else:
            uid, self.next_id = self.next_id, self.next_id + 1
        self.entries[uid] = data
        self.order.setdefault(data.body, []).append(uid)
        return uid

    def remove(self, uid: int) -> bool:
        data = self.entries.pop(uid, None)
        if data is None:
            return False
        ids = self.order[data.body]
        k = ids.index(uid)
        ids[k] = ids[-1]
        ids.pop()
        self.free.append(uid)
        return True

    def drop_body(self, body: int) -> None:
        for uid in list(self.order.get(body, ())):
            self.remove(uid)
        self.order.pop(body, None)


def _table(client) -> UserDataTable:
    if client.user_data is None:
        client.user_data = UserDataTable()
    return client.user_data


def _text(value, function: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise error(f"{function}: {what} must be a str, got {type(value).__name__}")
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise error(f"{function}: {what} is not encodable as UTF-8 ({e.reason} at "
                    f"character {e.start})") from None
    if b"\0" in data:
        raise error(f"{function}: {what} holds a NUL character at byte {data.index(0)} "
                    "(PyBullet's user data are C strings)")
    if len(data) > MAX_TEXT_BYTES:
        raise error(f"{function}: {what} has {len(data)} bytes, more than the "
                    f"{MAX_TEXT_BYTES} bytes user data may hold")
    return data


def _place(client, bodyUniqueId, linkIndex, visualShapeIndex, function: str) -> tuple:
    body = client.body(bodyUniqueId)
    link = body.check_link(linkIndex, function)
    visual = _as_index(visualShapeIndex, function, "visualShapeIndex")
    if visual < -1:
        raise error(f"{function}: visualShapeIndex must be -1 (none) or a visual shape index, "
                    f"got {visual}")
    return body.uid, link, visual


def _find(table: UserDataTable, place: tuple, key: bytes) -> int:
    return next((uid for uid in table.order.get(place[0], ())
                 if (table.entries[uid].link, table.entries[uid].visual) == place[1:]
                 and table.entries[uid].key == key), -1)


def addUserData(bodyUniqueId, key, value, linkIndex=-1, visualShapeIndex=-1,
                physicsClientId=0) -> int:
    """Attach value to (body, link, visual shape) under key; its userDataId."""
    client = get_client(physicsClientId)
    key_bytes = _text(key, "addUserData", "key")
    value_bytes = _text(value, "addUserData", "value")
    place = _place(client, bodyUniqueId, linkIndex, visualShapeIndex, "addUserData")
    table = _table(client)
    uid = _find(table, place, key_bytes)
    if uid >= 0:
        table.entries[uid].value = value_bytes
        return uid
    if len(table.entries) >= MAX_ENTRIES:
        raise error(f"addUserData: physics client {client.id} already holds {MAX_ENTRIES} user "
                    "data entries (the most it keeps); remove some first")
    return table.add(UserData(*place, key_bytes, value_bytes))


def getUserData(userDataId, physicsClientId=0):
    """The value (bytes) of a user data entry, None if there is no such id."""
    client = get_client(physicsClientId)
    data = _table(client).entries.get(_as_index(userDataId, "getUserData", "userDataId"))
    return None if data is None else data.value


def getUserDataId(bodyUniqueId, key, linkIndex=-1, visualShapeIndex=-1, physicsClientId=0) -> int:
    """The id of key on (body, link, visual shape); -1 if it has none."""
    client = get_client(physicsClientId)
    key_bytes = _text(key, "getUserDataId", "key")
    place = _place(client, bodyUniqueId, linkIndex, visualShapeIndex, "getUserDataId")
    return _find(_table(client), place, key_bytes)


def getNumUserData(bodyUniqueId, physicsClientId=0) -> int:
    """How many user data entries a body has (on all its links and shapes); 0 for an unknown
    body, as PyBullet."""
    client = get_client(physicsClientId)
    uid = _as_index(bodyUniqueId, "getNumUserData", "bodyUniqueId")
    return len(_table(client).order.get(uid, ()))


def getUserDataInfo(bodyUniqueId, userDataIndex, physicsClientId=0) -> tuple:
    """(userDataId, key, bodyUniqueId, linkIndex, visualShapeIndex) of the body's
    userDataIndex-th entry (0 <= userDataIndex < getNumUserData)."""
    client = get_client(physicsClientId)
    body = client.body(bodyUniqueId)
    index = _as_index(userDataIndex, "getUserDataInfo", "userDataIndex")
    table = _table(client)
    ids = table.order.get(body.uid, ())
    if not 0 <= index < len(ids):
        raise error(f"getUserDataInfo: userDataIndex {index} out of range (body {body.uid} has "
                    f"{len(ids)} user data entries)")
    data = table.entries[ids[index]]
    return ids[index], data.key, data.body, data.link, data.visual


def removeUserData(userDataId, physicsClientId=0) -> None:
    client = get_client(physicsClientId)
    uid = _as_index(userDataId, "removeUserData", "userDataId")
    if not _table(client).remove(uid):
        raise error(f"removeUserData: no user data with id {uid} in physics client "
                    f"{client.id}")


def syncUserData(bodyUniqueId=None, physicsClientId=0) -> None:
    """Nothing to fetch: user data lives in this process (PyBullet's client asks its server);
    the bodies named (a list of unique ids, PyBullet's keyword) must exist."""
    client = get_client(physicsClientId)
    for uid in bodyUniqueId or ():
        client.body(uid)
