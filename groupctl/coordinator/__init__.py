"""groupctl.coordinator: group members and what drives them (ARCHITECTURE.md).

    members/     sans-IO member protocols: the interface, the shared base, classic/, consumer/
    assignors/   the Java client's client-side assignors (a classic leader runs them)
    driver/      the one member driver: a member's I/O, timers, failures and leave
    probe/       `join`: the probe (a member on the driver, its view of the group)
    steer/       `force-rebalance` and `remove-member`
"""
