"""The ROS 2 side of sim_node: the simulation node (DESIGN.md §6), its services, recording and
replay. Everything here reaches the simulation only through the simulator API (sim_node.sim)."""
