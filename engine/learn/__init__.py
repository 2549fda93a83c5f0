"""Learning from runs: the traces (SQLite), rules mined from them and verified before use, the user's saved actions, trajectories for training, and the knowledge the catalogue gives the planner."""
