"""GPU building blocks (numba.cuda). ``warp`` holds every warp-level routine; ``planner_model`` is its
plain numpy twin used to check the planner on machines without a GPU."""
