"""Planning on top of the model and simulator layers (Klamp't's klampt.plan).

robotoptimize: RobotOptimizationProblem and KlamptVariable (seed 001), with its pieces
expression (costs and constraints as saveable text), rotation_encoding (how a rotation is
parameterised) and ik_json (IK objectives in Klamp't's JSON form).
"""
