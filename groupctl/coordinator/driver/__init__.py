"""The one member driver (member_driver.py): sends what a member asks for on its routes,
feeds it the answers, follows its coordinator and leaves on every exit."""
