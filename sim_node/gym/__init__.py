"""gymnasium environments on the sim_node engine (issue 14)."""
